/**
 * Attack (review round 5): what a transaction leaves at rest. Each operation item held a sealed copy of the token
 * as staged (data and cvc) for 7 days after its commit or rollback, the cvc's hour and the token's deletion; and
 * a commit put back a cvc the sweep had already removed, with no sweep entry left to remove it again. Later (27 Nov
 * 2026): a staged version wrote no sweep entries, a commit that read its clock just before a cvc's end put
 * it back, and a copy staged while the sweep removed the token's cvc kept it.
 */
import { describe, expect, it } from "vitest";
import { auditEvent } from "#shared/domain/audit-entry.ts";
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
    // The staged copy in the open transaction's operation item loses its cvc at the same time (review round
    // 21: it kept it, sealed at rest past its hour, until the commit, the rollback or the transaction's expiry).
    const staged = (await itemsNaming()).find((i) => i.entity === "transaction_operation");
    expect(staged?.next).toMatchObject({ metadata: { a: "b" } });
    expect(staged?.next).not.toHaveProperty("sealed_cvc");
    expect(staged?.next).not.toHaveProperty("cvc_expires_at");
    expect((await api.post(`/transactions/${txn}/commit`, { key: owner })).status).toBeLessThan(300);
    // Before: the commit put the staged copy back, sealed cvc included, and nothing was left to remove it.
    expect((await token())?.sealed_cvc).toBeUndefined();
    expect((await token())?.metadata).toEqual({ a: "b" });
  });

  it("leaves no sealed cvc in a copy staged while the sweep removed the token's (review round 23)", async () => {
    const { tenant, id, stage, itemsNaming } = await cardInTransaction();
    // Between the cvc removal's read of the token's hold (none) and its update of the token, a PATCH joins a
    // transaction: its op item copies the token, expired cvc included.
    let txnId: string | undefined;
    const sweep = svc.service.deps.sweep as unknown as { client: { send: (c: unknown) => Promise<unknown> } };
    const client = sweep.client;
    sweep.client = {
      send: async (command: unknown) => {
        const out = await client.send(command as never);
        const input = (command as { input?: { ProjectionExpression?: string; Key?: { PK?: string } } }).input;
        const readsHold = String(input?.ProjectionExpression ?? "").startsWith("txn_id");
        if (!txnId && readsHold && input?.Key?.PK === `TOKEN#${tenant.tenantId}#${id}`) txnId = await stage();
        return out;
      },
    } as never;
    try {
      await advance(3700); // the cvc's hour is over: its entry runs
    } finally {
      sweep.client = client;
    }
    expect(txnId).toBeDefined();
    const token = async () => (await itemsNaming()).find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`);
    expect((await token())?.sealed_cvc).toBeUndefined();
    await advance(1800); // half an hour more, the transaction still open
    const staged = (await itemsNaming()).find((i) => i.entity === "transaction_operation");
    expect(staged?.next).toMatchObject({ metadata: { a: "b" } });
    expect(staged?.next, "the staged copy, past the cvc's hour").not.toHaveProperty("sealed_cvc");
  }, 120_000);

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

/** A card (with a cvc, if given) and a PATCH that may join a transaction. */
async function setup(cvc?: string) {
  const { api, tenant } = await tenantWithOwner(svc);
  const owner = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    rules: revealEverything,
  });
  const data = { number: VISA, expiration_month: 12, expiration_year: 2031, ...(cvc ? { cvc } : {}) };
  const card = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "card", data } });
  expect(card.status).toBe(201);
  const id = card.body.id;
  const raw = async () =>
    (await scanTable(svc)).find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`) as Record<string, unknown>;
  const patch = (body: unknown, txn?: string) =>
    api.patch(`/tokens/${id}`, {
      key: owner,
      body,
      headers: { ...mergePatch, ...(txn ? { "svc-transaction-id": txn } : {}) },
    });
  return { api, owner, tenant, id, raw, patch };
}

describe("a cvc given by a PATCH inside a transaction", () => {
  it("is removed by the sweep after its hour, like one given outside a transaction", async () => {
    // Control: outside a transaction the PATCH writes a C sweep entry, and the sweep removes the cvc.
    const plain = await setup();
    expect((await plain.patch({ data: { cvc: "456" } })).status).toBe(200);
    // In a transaction: the same PATCH, committed.
    const held = await setup();
    const txn = await held.api.post<{ id: string }>("/transactions", { key: held.owner });
    expect((await held.patch({ data: { cvc: "789" } }, txn.body.id)).status).toBe(200);
    expect((await held.api.post(`/transactions/${txn.body.id}/commit`, { key: held.owner })).status).toBe(
      200,
    );
    expect((await held.raw()).sealed_cvc).toBeDefined();

    await advance(2 * 3600);
    await sweepExpired(svc.service.deps);

    expect((await plain.raw()).sealed_cvc).toBeUndefined();
    // The staged version's sweep entries: without them the cvc stayed sealed at rest for the token's whole life.
    const stored = await held.raw();
    expect(stored.sealed_cvc).toBeUndefined();
    expect(stored.cvc_expires_at).toBeUndefined();
  });
});

describe("an expiry set by a PATCH inside a transaction", () => {
  it("is deleted by the sweep (not left to the TTL backstop, uncounted)", async () => {
    const held = await setup();
    const txn = await held.api.post<{ id: string }>("/transactions", { key: held.owner });
    const soon = new Date(Date.parse(String((await held.raw()).created_at)) + 600_000).toISOString();
    expect((await held.patch({ expires_at: soon }, txn.body.id)).status).toBe(200);
    expect((await held.api.post(`/transactions/${txn.body.id}/commit`, { key: held.owner })).status).toBe(
      200,
    );
    await advance(2 * 3600);
    await sweepExpired(svc.service.deps);
    expect(await held.raw()).toBeUndefined();
  });
});

describe("a commit that read the clock just before the cvc's end", () => {
  it("does not put back a cvc the sweep removed before the commit's write", async () => {
    const { api, owner, tenant, raw, patch } = await setup("123");
    await advance(3000);
    const txn = await api.post<{ id: string }>("/transactions", { key: owner });
    expect((await patch({ metadata: { a: "b" } }, txn.body.id)).status).toBe(200);
    const cvcEnd = String((await raw()).cvc_expires_at);
    const commitNow = new Date(Date.parse(cvcEnd) - 1000); // the commit's clock.now(), a second before the end
    await advance(700);
    await sweepExpired(svc.service.deps); // the sweep removes the cvc between that read and the commit's write
    expect((await raw()).sealed_cvc).toBeUndefined();

    const deps = svc.service.deps;
    const record = await deps.transactions.get(tenant.tenantId, txn.body.id);
    const audit = auditEvent(
      deps,
      { tenantId: tenant.tenantId, actor: { type: "system" } },
      "transaction",
      txn.body.id,
      "update",
      "Transaction committed",
    );
    expect(await deps.transactions.commit(record as never, commitNow, audit)).toBeTruthy();
    // A cvc within a minute of its end is not written back (CVC_WRITE_MARGIN_MS): it used to be, by `now` alone.
    expect((await raw()).sealed_cvc).toBeUndefined();
  });
});
