import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { withOneStoreFailure } from "#test/support/dynamo.ts";
import { useService } from "#test/support/service.ts";
import {
  ALL_TOKEN_PERMISSIONS,
  appKey,
  revealEverything,
  type TokenBody,
  tenantWithOwner,
} from "#test/support/tokens.ts";

/**
 * Attack: a key that may update a token but not delete it (a public key, or a private one without
 * token:delete) opens a transaction and PATCHes the token inside it. Before the fix the token was held: the
 * owner's own revealing key got 409 on every update and delete for the transaction's hour, and again after a new
 * transaction took it. Holding a token now takes token:delete on its container(s): the locker could end the
 * token itself, so a lock is never more than it could do. And a lock lasts only while its holder could still
 * delete the token: a revoked key, or an application that lost token:delete, holds nothing any more.
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

  it("a revoked key's transaction no longer holds the token: the owner's next write rolls it back", async () => {
    const { api, managementKey, ownerWrites, holder, txn } = await heldByNewHolder();

    const revoked = await api.delete(`/applications/${holder.id}/keys/${holder.keyId}`, {
      key: managementKey,
    });
    expect(revoked.status).toBe(204);

    expect(await ownerWrites()).toEqual({ update: 200, remove: 204 });
    const logs = await api.get<{ data: { message: string }[] }>(`/logs?entity_id=${txn}`, {
      key: managementKey,
    });
    expect(logs.body.data.map((e) => e.message)).toContain(
      "Transaction rolled back: its key can no longer delete a token it held",
    );
  });

  it("a transaction of an application whose deletion began (and failed part-way) no longer holds the token", async () => {
    const { api, managementKey, ownerWrites, holder, txn } = await heldByNewHolder();
    // The deletion marks the application, then fails listing its keys: the key is still listed, the mark stays.
    const deleted = await withOneStoreFailure(
      svc.service.deps.dynamo,
      (command) =>
        command instanceof QueryCommand && JSON.stringify(command.input).includes(`APPKEY#${holder.id}#`),
      async () => (await api.delete(`/applications/${holder.id}`, { key: managementKey })).status,
    );
    expect(deleted).toBeGreaterThanOrEqual(500);
    // Was: 409 for the transaction's hour (its key and application still existed); the key authenticates nothing now.
    expect(await ownerWrites()).toEqual({ update: 200, remove: 204 });
    const logs = await api.get<{ data: { message: string }[] }>(`/logs?entity_id=${txn}`, {
      key: managementKey,
    });
    expect(logs.body.data.map((e) => e.message)).toContain(
      "Transaction rolled back: its key can no longer delete a token it held",
    );
  });

  it("a stale hold's rollback is no effect of the idempotent write that met it: that write, failing, runs again", async () => {
    const { api, managementKey, owner, token, lockWith } = await setup();
    const holder = await holderApplication(api, managementKey);
    expect((await lockWith(holder.key)).res.status).toBe(200);
    const revoked = await api.delete(`/applications/${holder.id}/keys/${holder.keyId}`, {
      key: managementKey,
    });
    expect(revoked.status).toBe(204);
    // The owner's PATCH rolls the stale transaction back, then fails on its own data (400).
    const headers = { ...mergePatch, "svc-idempotency-key": "patch-once" };
    const patch = () =>
      api.patch(`/tokens/${token.id}`, { key: owner, body: { data: { number: "1234" } }, headers });
    expect((await patch()).status).toBe(400);
    // Before (review round 26): the rollback's audit entry was recorded as the PATCH's effect, so the failed PATCH
    // counted as having taken effect and its retry answered 409.
    expect((await patch()).status).toBe(400);
  });

  it("a transaction whose application lost token:delete no longer holds: rolled back, its change never lands", async () => {
    const { api, managementKey, owner, token, lockWith } = await setup();
    const holder = await holderApplication(api, managementKey);
    const { txn, res } = await lockWith(holder.key, { metadata: { by: "holder" } });
    expect(res.status).toBe(200);

    const narrowed = await api.put(`/applications/${holder.id}`, {
      key: managementKey,
      body: { name: "holder", permissions: ["token:create", "token:read", "token:update"] },
    });
    expect(narrowed.status).toBe(200);

    expect(await ownerUpdate(api, owner, token.id)).toBe(200);
    // The holder's pending change was discarded with its transaction: committing it now finds nothing open.
    expect((await api.post(`/transactions/${txn}/commit`, { key: holder.key })).status).toBe(404);
    const after = await api.get<TokenBody>(`/tokens/${token.id}`, { key: owner });
    expect(after.body.metadata).toEqual({ by: "owner" });
    // No lock was written back with the owner's update.
    expect((await api.delete(`/tokens/${token.id}`, { key: owner })).status).toBe(204);
  });
});

describe("attack: holding a value through a pending create", () => {
  it("a public key's uncommitted create does not make the owner's deduplicating create of that value a 409", async () => {
    const { api, managementKey, writer } = await setup();
    const publicKey = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
    const txn = await api.post<{ id: string }>("/transactions", { key: publicKey });
    const value = { type: "card_number", data: "5555555555554444", deduplicate_token: true };
    const pending = await api.post<TokenBody>("/tokens", {
      key: publicKey,
      body: value,
      headers: { "svc-transaction-id": txn.body.id },
    });
    expect(pending.status).toBe(201);

    const owners = await api.post<TokenBody>("/tokens", { key: writer, body: value });
    const again = await api.post<TokenBody>("/tokens", { key: writer, body: value });

    // The pending token does not exist for the owner (transactions are isolated), so it holds nothing either.
    expect(owners.status).toBe(201);
    expect(owners.body.id).not.toBe(pending.body.id);
    expect(again.body.id).toBe(owners.body.id);
  });

  it("a public key cannot hold a chosen id by an uncommitted create: 403, and the back end creates its own token under it", async () => {
    const { api, managementKey, writer } = await setup();
    const publicKey = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
    const txn = await api.post<{ id: string }>("/transactions", { key: publicKey });
    // The back end names its tokens after its orders; the page's public key is in every shopper's browser.
    const id = "order-1001";
    const squat = await api.post<TokenBody>("/tokens", {
      key: publicKey,
      body: { type: "token", data: "attacker", id },
      headers: { "svc-transaction-id": txn.body.id },
    });
    // Before: 201, and the back end's create under its own id was a 409 for the transaction's hour, while its GET
    // and DELETE of that id answered 404 (a pending create is no token to them).
    expect(squat.status).toBe(403);
    const own = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "order", id },
    });
    expect(own.status).toBe(201);
    // A generated id is no one else's to want: the same key's create without an id still joins.
    const joined = await api.post<TokenBody>("/tokens", {
      key: publicKey,
      body: { type: "token", data: "page" },
      headers: { "svc-transaction-id": txn.body.id },
    });
    expect(joined.status).toBe(201);
  });

  it("a revoked key's pending create under a chosen id holds it no longer: the owner's create rolls that transaction back", async () => {
    const { api, managementKey, writer } = await setup();
    const id = "order-2001";
    const { holder } = await pendingCreate(api, managementKey, id);
    const revoked = await api.delete(`/applications/${holder.id}/keys/${holder.keyId}`, {
      key: managementKey,
    });
    expect(revoked.status).toBe(204);
    // Before: 409 for the transaction's hour, while GET and DELETE of the id answered 404 (review round 11).
    const own = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "order", id },
    });
    expect(own.status).toBe(201);
    expect((await api.get(`/tokens/${id}`, { key: writer })).status).toBe(200);
  });

  it("review r12: a revoked key's pending create under a chosen id holds it no longer for POST /tokenize either", async () => {
    const { api, managementKey, writer } = await setup();
    const id = "order-2002";
    const { holder } = await pendingCreate(api, managementKey, id);
    const revoked = await api.delete(`/applications/${holder.id}/keys/${holder.keyId}`, {
      key: managementKey,
    });
    expect(revoked.status).toBe(204);
    // POST /tokens releases the stale hold (round 11); the back end's import through POST /tokenize does not:
    // found 409 "A token with this id already exists" for the transaction's hour, GET of the id 404.
    const batch = await api.post<TokenBody[]>("/tokenize", {
      key: writer,
      body: [{ type: "token", data: "order", id }],
    });
    expect(batch.status).toBe(201);
    expect((await api.get(`/tokens/${id}`, { key: writer })).status).toBe(200);
  });

  it("review r12: a public key's create under an id a running POST /tokenize batch is staging does not roll that batch back", async () => {
    const { api, managementKey, writer } = await setup();
    const publicKey = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
    // The back end imports its orders under its own ids: 120 requests pass one write, so they are staged pending.
    const ids = Array.from({ length: 120 }, (_, i) => `import-order-${i}`);
    const body = ids.map((id) => ({ type: "token", id, data: `card of ${id}` }));
    // While the batch is staged (between its staging and its commit), a shopper's page sends one of its ids.
    const tokens = svc.service.deps.tokens as unknown as Record<
      string,
      (...args: unknown[]) => Promise<unknown>
    >;
    const stage = tokens.stageCreates as (...args: unknown[]) => Promise<unknown>;
    let squat: { status: number } | undefined;
    tokens.stageCreates = async (...args: unknown[]) => {
      tokens.stageCreates = stage;
      const staged = await stage.apply(svc.service.deps.tokens, args);
      squat = await api.post("/tokens", {
        key: publicKey,
        body: { type: "token", data: "attacker's card", id: "import-order-7" },
      });
      return staged;
    };
    const batch = await api.post<{ detail?: string }>("/tokenize", { key: writer, body });
    // Found: the page's create met a pending create held by a batch (opened_by "batch:…", no key: releaseStaleHold
    // judged that holder unable to delete) and rolled the whole batch back: the create 201 under the back end's
    // id with the attacker's data, the import 409 "rolled back; nothing was stored".
    expect({ squat: squat?.status, batch: batch.status }).toEqual({ squat: 409, batch: 201 });
  });

  it("a key that may delete tokens creates under a chosen id in its transaction, held until it commits", async () => {
    const { api, managementKey, writer } = await setup();
    const id = "order-1002";
    const { holder, transactionId } = await pendingCreate(api, managementKey, id);
    expect((await api.post("/tokens", { key: writer, body: { type: "token", data: "x", id } })).status).toBe(
      409,
    );
    expect((await api.post(`/transactions/${transactionId}/commit`, { key: holder.key })).status).toBe(200);
    expect((await api.get(`/tokens/${id}`, { key: writer })).status).toBe(200);
  });
});

type Api = Awaited<ReturnType<typeof setup>>["api"];

/** A private application that may delete tokens, with its key and the key's id. */
/** A token locked by a transaction of a new holder application: the owner's writes wait (409) meanwhile. */
async function heldByNewHolder() {
  const context = await setup();
  const holder = await holderApplication(context.api, context.managementKey);
  const { txn, res } = await context.lockWith(holder.key);
  expect(res.status).toBe(200);
  expect(await ownerUpdate(context.api, context.owner, context.token.id)).toBe(409);
  return { ...context, holder, txn };
}

async function holderApplication(api: Api, managementKey: string) {
  const created = await api.post<{ id: string; key: string; keys: { id: string }[] }>("/applications", {
    key: managementKey,
    body: { name: "holder", type: "private", permissions: ALL_TOKEN_PERMISSIONS },
  });
  expect(created.status).toBe(201);
  return { id: created.body.id, key: created.body.key, keyId: String(created.body.keys[0]?.id) };
}

/** A holder application's key opens a transaction and creates, pending in it, a token under the chosen `id`. */
async function pendingCreate(api: Api, managementKey: string, id: string) {
  const holder = await holderApplication(api, managementKey);
  const txn = await api.post<{ id: string }>("/transactions", { key: holder.key });
  const pending = await api.post<TokenBody>("/tokens", {
    key: holder.key,
    body: { type: "token", data: "held", id },
    headers: { "svc-transaction-id": txn.body.id },
  });
  expect(pending.status).toBe(201);
  return { holder, transactionId: txn.body.id };
}

async function ownerUpdate(api: Api, owner: string, id: string) {
  const res = await api.patch(`/tokens/${id}`, {
    key: owner,
    body: { metadata: { by: "owner" } },
    headers: mergePatch,
  });
  return res.status;
}

/** A holder application with every token permission, which the owner then narrows (`narrow`). */
async function holderSetup() {
  const { api, tenant } = await tenantWithOwner(svc);
  const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const holder = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "holder", type: "private", permissions: ALL_TOKEN_PERMISSIONS },
  });
  expect(holder.status).toBe(201);
  const create = async (data: string) =>
    (await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data } })).body.id;
  const narrow = async (permissions: string[]) =>
    expect(
      (
        await api.put(`/applications/${holder.body.id}`, {
          key: tenant.managementKey,
          body: { name: "holder", permissions },
        })
      ).status,
    ).toBe(200);
  return { api, owner, holder: holder.body, create, narrow, managementKey: tenant.managementKey };
}

describe("attack: committing after the application lost the permission its staged writes need", () => {
  it("a staged delete does not land once the holder's application lost token:delete", async () => {
    const { api, owner, holder, create, narrow } = await holderSetup();
    const id = await create("keep me");
    const txn = await api.post<{ id: string }>("/transactions", { key: holder.key });
    const headers = { "svc-transaction-id": txn.body.id };
    expect((await api.delete(`/tokens/${id}`, { key: holder.key, headers })).status).toBe(204);

    await narrow(["token:create", "token:read", "token:update"]);
    // Narrowed: the holder can no longer delete it directly...
    const headers2 = { "svc-idempotency-key": "commit-once" };
    const commit = await api.post(`/transactions/${txn.body.id}/commit`, {
      key: holder.key,
      headers: headers2,
    });
    const retry = await api.post(`/transactions/${txn.body.id}/commit`, {
      key: holder.key,
      headers: headers2,
    });

    // ...nor through the delete it had staged (it was a 200, the token deleted); the retry finds it rolled back.
    expect([commit.status, retry.status]).toEqual([403, 404]);
    expect((await api.get(`/tokens/${id}`, { key: owner })).status).toBe(200);
    // The hold is gone with it: the owner writes the token again.
    expect(
      (await api.patch(`/tokens/${id}`, { key: owner, body: { metadata: { a: "b" } }, headers: mergePatch }))
        .status,
    ).toBe(200);
  });

  it("a staged update does not land once the holder's application lost token:delete and token:update", async () => {
    const { api, owner, holder, create, narrow } = await holderSetup();
    const id = await create("v1");
    const txn = await api.post<{ id: string }>("/transactions", { key: holder.key });
    const headers = { "svc-transaction-id": txn.body.id, ...mergePatch };
    expect(
      (await api.patch(`/tokens/${id}`, { key: holder.key, body: { data: "evil" }, headers })).status,
    ).toBe(200);

    await narrow(["token:read"]);
    const commit = await api.post(`/transactions/${txn.body.id}/commit`, { key: holder.key });

    expect(commit.status).toBe(403); // it was a 200
    expect((await api.get<TokenBody>(`/tokens/${id}`, { key: owner })).body.data).toBe("v1");
  });

  it("a pending create does not land once the application lost token:create", async () => {
    const { api, owner, holder, narrow } = await holderSetup();
    const txn = await api.post<{ id: string }>("/transactions", { key: holder.key });
    const headers = { "svc-transaction-id": txn.body.id };
    const body = { type: "token", data: "planted", id: "planted-1" };
    expect((await api.post("/tokens", { key: holder.key, body, headers })).status).toBe(201);

    await narrow(["token:read"]);
    const commit = await api.post(`/transactions/${txn.body.id}/commit`, { key: holder.key });

    expect(commit.status).toBe(403); // it was a 200
    expect((await api.get(`/tokens/planted-1`, { key: owner })).status).toBe(404);
  });

  it("control: an unchanged application commits", async () => {
    const { api, owner, holder, create } = await holderSetup();
    const id = await create("gone");
    const txn = await api.post<{ id: string }>("/transactions", { key: holder.key });
    const headers = { "svc-transaction-id": txn.body.id };
    expect((await api.delete(`/tokens/${id}`, { key: holder.key, headers })).status).toBe(204);
    expect((await api.post(`/transactions/${txn.body.id}/commit`, { key: holder.key })).status).toBe(200);
    expect((await api.get(`/tokens/${id}`, { key: owner })).status).toBe(404);
  });
});

const rulesOf = (transform: "reveal" | "mask") => [
  { description: "all", priority: 1, container: "/", transform, permissions: ALL_TOKEN_PERMISSIONS },
];

describe("attack: commit after the holder's grant narrowed", () => {
  // The re-check ran on operations read before the commit and judged no reveal-level token:update: a key narrowed
  // to mask committed its staged move, and a write joining between that read and the commit's landed unchecked
  // (round-3 review of 28 Nov 2026). Now the commit judges exactly the operations it applies.
  it("a staged move does not land once the holder's token:update is no longer reveal-level", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const holder = await api.post<{ id: string; key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "holder", type: "private", rules: rulesOf("reveal") },
    });
    expect(holder.status).toBe(201);
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "s3cret", containers: ["/vault/"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;

    const txn = await api.post<{ id: string }>("/transactions", { key: holder.body.key });
    const staged = await api.patch(`/tokens/${id}`, {
      key: holder.body.key,
      body: { containers: ["/outside/"] },
      headers: { ...mergePatch, "svc-transaction-id": txn.body.id },
    });
    expect(staged.status).toBe(200);

    // The owner narrows the holder: still token:update and token:delete everywhere, but masked (no moves).
    const narrowed = await api.put(`/applications/${holder.body.id}`, {
      key: tenant.managementKey,
      body: { name: "holder", rules: rulesOf("mask") },
    });
    expect(narrowed.status).toBe(200);

    const commit = await api.post(`/transactions/${txn.body.id}/commit`, { key: holder.body.key });
    expect(commit.status).toBe(403); // was 200: the move the key may no longer make landed
    const after = await api.get<TokenBody>(`/tokens/${id}`, { key: owner });
    expect(after.body.containers).toEqual(["/vault/"]);
    // Control: directly, the narrowed key may not make that move.
    const direct = await api.patch(`/tokens/${id}`, {
      key: holder.body.key,
      body: { containers: ["/outside/"] },
      headers: mergePatch,
    });
    expect(direct.status).toBe(403);
  });

  it("a write that joins just before the commit is judged with the rest: it does not land unchecked", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const holder = await api.post<{ id: string; key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "holder", type: "private", permissions: ALL_TOKEN_PERMISSIONS },
    });
    const id = (
      await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "keep me" } })
    ).body.id;
    const txn = (await api.post<{ id: string }>("/transactions", { key: holder.body.key })).body.id;

    const { dynamo } = svc.service.deps;
    // The holder's DELETE (checked while it still had token:delete) is slow to write: held until the commit runs.
    let releaseDelete: () => void = () => undefined;
    const deleteMayGo = new Promise<void>((resolve) => {
      releaseDelete = resolve;
    });
    let deleteHeld: () => void = () => undefined;
    const deleteReached = new Promise<void>((resolve) => {
      deleteHeld = resolve;
    });
    let deleteWritten: () => void = () => undefined;
    const written = new Promise<void>((resolve) => {
      deleteWritten = resolve;
    });
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const input = JSON.stringify(args.input);
        if (
          context.commandName === "TransactWriteItemsCommand" &&
          input.includes(`Token deletion pending in transaction ${txn}`)
        ) {
          deleteHeld();
          await deleteMayGo;
          try {
            return await next(args);
          } finally {
            deleteWritten();
          }
        }
        if (context.commandName === "TransactWriteItemsCommand" && input.includes(":committed")) {
          releaseDelete();
          await written;
        }
        return next(args);
      },
      { step: "initialize", name: "r3-slow-join", priority: "high" },
    );
    try {
      const pendingDelete = api.delete(`/tokens/${id}`, {
        key: holder.body.key,
        headers: { "svc-transaction-id": txn },
      });
      await deleteReached;
      // Narrowed while the delete is on its way: no token:delete any more.
      const narrowed = await api.put(`/applications/${holder.body.id}`, {
        key: tenant.managementKey,
        body: { name: "holder", permissions: ["token:create", "token:read", "token:update"] },
      });
      expect(narrowed.status).toBe(200);

      const commit = await api.post(`/transactions/${txn}/commit`, { key: holder.body.key });
      expect((await pendingDelete).status).toBe(204);
      expect(commit.status).toBe(403); // was 200: the delete the key may no longer make landed
      expect((await api.get(`/tokens/${id}`, { key: owner })).status).toBe(200);
    } finally {
      releaseDelete();
      dynamo.middlewareStack.remove("r3-slow-join");
    }
  });
});
