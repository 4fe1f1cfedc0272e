/**
 * Attack (review round 5): what a transaction leaves at rest. Each operation item held a sealed copy of the token
 * as staged (data and cvc) for 7 days after its commit or rollback, the cvc's hour and the token's deletion; and
 * a commit put back a cvc the sweep had already removed, with no sweep entry left to remove it again.
 */
import { describe, expect, it } from "vitest";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import {
  ALL_TOKEN_PERMISSIONS,
  appKey,
  revealEverything,
  type TokenBody,
  tenantWithOwner,
  VISA,
} from "#test/support/tokens.ts";

const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const advance = (seconds: number) => advanceTestClock(svc, seconds);

async function cardInTransaction() {
  const { api, tenant } = await tenantWithOwner(svc);
  const owner = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    rules: revealEverything,
  });
  const card = await api.post<TokenBody>("/tokens", {
    key: owner,
    body: { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2031, cvc: "123" } },
  });
  expect(card.status).toBe(201);
  const stage = async () => {
    const txn = await api.post<{ id: string }>("/transactions", { key: owner });
    const patched = await api.patch(`/tokens/${card.body.id}`, {
      key: owner,
      body: { metadata: { a: "b" } },
      headers: { ...mergePatch, "svc-transaction-id": txn.body.id },
    });
    expect(patched.status).toBe(200);
    return txn.body.id;
  };
  const itemsNaming = async () =>
    (await scanTable(svc)).filter((i) => JSON.stringify(i).includes(card.body.id));
  return { api, owner, tenant, id: card.body.id, stage, itemsNaming };
}

describe("attack: a transaction's residue", () => {
  it("keeps no sealed copy of the token once committed or rolled back", async () => {
    const { api, owner, stage, itemsNaming } = await cardInTransaction();
    const committed = await stage();
    expect((await api.post(`/transactions/${committed}/commit`, { key: owner })).status).toBeLessThan(300);
    const rolledBack = await stage();
    expect((await api.post(`/transactions/${rolledBack}/rollback`, { key: owner })).status).toBeLessThan(300);
    // Before: two operation items, each with `next.sealed_data` and `next.sealed_cvc`, kept 7 days.
    const copies = (await itemsNaming()).filter((i) => i.entity === "transaction_operation");
    expect(copies).toEqual([]);
  });

  it("never puts back a cvc the sweep removed while the transaction was open", async () => {
    const { api, owner, tenant, id, stage, itemsNaming } = await cardInTransaction();
    await advance(3000);
    const txn = await stage();
    await advance(700); // the cvc's hour is over
    await sweepExpired(svc.service.deps);
    const token = async () => (await itemsNaming()).find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`);
    expect((await token())?.sealed_cvc).toBeUndefined();
    expect((await api.post(`/transactions/${txn}/commit`, { key: owner })).status).toBeLessThan(300);
    // Before: the commit put the staged copy back, sealed cvc included, and nothing was left to remove it.
    expect((await token())?.sealed_cvc).toBeUndefined();
    expect((await token())?.metadata).toEqual({ a: "b" });
  });

  it("keeps a value PATCHed inside a transaction searchable when a search met it before the commit", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
      rules: revealEverything,
    });
    const make = async (email: string) => {
      const body = { type: "token", data: { email }, search_indexes: ["{{ data.email }}"] };
      return (await api.post<TokenBody>("/tokens", { key: owner, body })).body.id;
    };
    const [a, control] = [await make("a-old@example.com"), await make("b-old@example.com")];
    const search = async (email: string) =>
      (
        await api.post<{ data: TokenBody[] }>("/v2/tokens/search", {
          key: owner,
          body: { query: `data:${email}` },
        })
      ).body.data.map((t) => t.id);
    const txn = await api.post<{ id: string }>("/transactions", { key: owner });
    for (const [id, email] of [
      [a, "a-new@example.com"],
      [control, "b-new@example.com"],
    ] as const) {
      const headers = { ...mergePatch, "svc-transaction-id": txn.body.id };
      expect(
        (await api.patch(`/tokens/${id}`, { key: owner, body: { data: { email } }, headers })).status,
      ).toBe(200);
    }
    // Before the commit the token item still holds the old hash: the new value's lookup item looked stale, and
    // this search deleted it for good (review of round 7).
    expect(await search("a-new@example.com")).toEqual([]);
    expect((await api.post(`/transactions/${txn.body.id}/commit`, { key: owner })).status).toBe(200);
    expect(await search("a-new@example.com")).toEqual([a]);
    expect(await search("b-new@example.com")).toEqual([control]);
  });
});
