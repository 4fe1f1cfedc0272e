import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Attack: a key that may update a token but not delete it (a public key, or a private one without
 * token:delete) opens a transaction and PATCHes the token inside it. Before the fix the token was held: the
 * owner's own revealing key got 409 on every update and delete for the transaction's hour, and again after a new
 * transaction took it. Holding a token now takes token:delete on its container(s): the locker could end the
 * token itself, so a lock is never more than it could do.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

async function setup() {
  const { api, tenant, owner: writer } = await tenantWithOwner(svc);
  const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", {
    key: owner,
    body: { type: "card", data: { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 } },
  });
  expect(token.status).toBe(201);
  /** A key of `body`'s application opens a transaction and PATCHes the token's metadata inside it. */
  const lockWith = async (key: string, patch: Record<string, unknown> = { metadata: { held: "yes" } }) => {
    const txn = await api.post<{ id: string }>("/transactions", { key });
    expect(txn.status).toBe(201);
    const res = await api.patch<TokenBody>(`/tokens/${token.body.id}`, {
      key,
      body: patch,
      headers: { ...mergePatch, "svc-transaction-id": txn.body.id },
    });
    return { txn: txn.body.id, res };
  };
  /** What the owner's revealing key can still do to the token. */
  const ownerWrites = async () => {
    const update = await api.patch<TokenBody>(`/tokens/${token.body.id}`, {
      key: owner,
      body: { metadata: { by: "owner" } },
      headers: mergePatch,
    });
    const remove = await api.delete(`/tokens/${token.body.id}`, { key: owner });
    return { update: update.status, remove: remove.status };
  };
  return { api, ...tenant, writer, owner, token: token.body, lockWith, ownerWrites };
}

describe("attack: holding a token in a transaction without the right to delete it", () => {
  it("a public key (token:create, token:update) cannot hold the owner's token: 403, nothing held", async () => {
    const { api, managementKey, owner, token, lockWith, ownerWrites } = await setup();
    const publicKey = await appKey(api, managementKey, {
      type: "public",
      permissions: ["token:create", "token:update"],
    });

    const { res } = await lockWith(publicKey);

    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(JSON.stringify(res.body)).toContain("token:delete");
    // Nothing pending, nothing held: the owner's key updates and then deletes the token.
    expect(await ownerWrites()).toEqual({ update: 200, remove: 204 });
    expect((await api.get(`/tokens/${token.id}`, { key: owner })).status).toBe(404);
  });

  it("a private key with token:update but not token:delete cannot hold it either", async () => {
    const { api, managementKey, lockWith, ownerWrites } = await setup();
    const updater = await appKey(api, managementKey, {
      type: "private",
      rules: [
        {
          priority: 1,
          container: "/",
          transform: "reveal",
          permissions: ["token:read", "token:update"],
        },
      ],
    });

    const { res } = await lockWith(updater);

    expect(res.status).toBe(403);
    expect(await ownerWrites()).toEqual({ update: 200, remove: 204 });
  });

  it("token:delete on another container does not count: the rule is per token container", async () => {
    const { api, managementKey, lockWith, ownerWrites } = await setup();
    const elsewhere = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/pci/", transform: "reveal", permissions: ["token:update"] },
        { priority: 2, container: "/general/", transform: "reveal", permissions: ["token:delete"] },
      ],
    });

    const { res } = await lockWith(elsewhere);

    expect(res.status).toBe(403);
    expect(await ownerWrites()).toEqual({ update: 200, remove: 204 });
  });

  it("a key that may delete the token may hold it, and its lock holds against every other key until it ends", async () => {
    const { api, writer, owner, token, lockWith, ownerWrites } = await setup();

    const { txn, res } = await lockWith(writer);

    expect(res.status).toBe(200);
    // The chosen rule keeps an open transaction all-or-nothing: nobody breaks its lock, the owner included.
    expect(await ownerWrites()).toEqual({ update: 409, remove: 409 });
    expect((await api.post(`/transactions/${txn}/commit`, { key: writer })).status).toBe(200);
    const after = await api.get<TokenBody>(`/tokens/${token.id}`, { key: owner });
    expect(after.body.metadata).toEqual({ held: "yes" });
    expect(await ownerWrites()).toEqual({ update: 200, remove: 204 });
  });
});
