/**
 * Attack (review rounds 23–25, 27 Nov 2026): op items whose transaction record is gone (DynamoDB's TTL removes items
 * in any order; since then the record outlives its op items by a day). Such a transaction may have committed (here
 * a one-write commit whose request died before forgetting its op items): undone as a rollback, it gave back a live
 * token's key count a second time (its key version destroyable under it), released its deduplication claim, and
 * was audited as rolled back. Two undo runs at once audited twice; a staged rollback meeting an orphan undo between
 * its undo and its count left the reservation counted for good. A token such a transaction held was put off at
 * every run, past its expiry. A token still held whose op item TTL had removed kept its reservation counted for
 * good when rolled back, and made its roll-forward fail at every try.
 */
import { DeleteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { transactionKeys } from "#shared/adapters/dynamodb/transaction-keys.ts";
import { auditEvent } from "#shared/domain/audit-entry.ts";
import { rollbackExpired } from "#shared/domain/transactions.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();
type Store = Record<string, unknown>;
type Items = Record<string, unknown>[];

/** Tokens counted per key set of the tenant (its KEYUSE# counters), zero counts left out. */
const keyUse = (items: Items, tenantId: string) => {
  const sum = new Map<string, number>();
  for (const i of items)
    if (i.PK === `TENANT#${tenantId}` && String(i.SK).startsWith("KEYUSE#"))
      sum.set(String(i.key_id), (sum.get(String(i.key_id)) ?? 0) + Number(i.tokens ?? 0));
  return Object.fromEntries([...sum].filter(([, n]) => n !== 0));
};
/** The audit entries of an orphan undo of `txnId`, and how many operations each says it undid. */
const orphanAudits = (items: Items, txnId: string) =>
  items
    .filter((i) => {
      const text = JSON.stringify(i);
      return String(i.PK).includes("#LOG#") && text.includes("whose record is gone") && text.includes(txnId);
    })
    .map((a) => Number(/\((\d+) of \d+ undone\)/.exec(String(a.message))?.[1] ?? Number.NaN));

/** TTL removes the record before its op items. */
async function dropRecord(tenantId: string, txnId: string) {
  const { dynamo, config } = svc.service.deps;
  await dynamo.send(
    new DeleteCommand({ TableName: config.tableName, Key: transactionKeys.record(tenantId, txnId) }),
  );
}

/**
 * A tenant with a token made outside any transaction, a transaction that has staged `body` (a create), and a reader
 * that reveals; `baseline`: the key counts before the staging.
 */
async function staged(body: Record<string, unknown>) {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const existing = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "old" } });
  const baseline = keyUse(await scanTable(svc), tenant.tenantId);
  const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
  const headers = { "svc-transaction-id": txn.id };
  const created = await api.post<TokenBody>("/tokens", { key: owner, body, headers });
  expect(created.status).toBe(201);
  return { api, tenant, owner, reader, baseline, txn, id: created.body.id, existing: existing.body.id };
}

describe("op items of a committed transaction whose record is gone", () => {
  it("keep the live token's key count and dedup claim, and no entry says they were rolled back", async () => {
    const body = { type: "token", data: "dedup-me", deduplicate_token: true };
    const { api, tenant, owner, reader, txn, id } = await staged(body);
    // The request dies after the one-write commit, before its op items are forgotten.
    const store = svc.service.deps.transactions as unknown as Store;
    const forget = store.forgetOperations;
    store.forgetOperations = () => Promise.reject(new Error("simulated crash"));
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: owner }).finally(() => {
      store.forgetOperations = forget;
    });
    expect(commit.status).toBe(500);
    expect(await svc.service.deps.transactions.get(tenant.tenantId, txn.id)).toMatchObject({
      state: "committed",
    });
    const before = keyUse(await scanTable(svc), tenant.tenantId);
    await dropRecord(tenant.tenantId, txn.id);
    await rollbackExpired(svc.service.deps, tenant.tenantId, txn.id);

    const items = await scanTable(svc);
    expect((await api.get(`/tokens/${id}`, { key: reader })).status).toBe(200);
    expect(keyUse(items, tenant.tenantId), "a live token's key set counted").toEqual(before);
    const claims = items.filter((i) => String(i.PK).startsWith(`FP#${tenant.tenantId}#`));
    expect(
      claims.some((i) => i.token_id === id),
      "the live token's dedup claim",
    ).toBe(true);
    expect(orphanAudits(items, txn.id), "nothing was undone").toEqual([]);
    expect(items.filter((i) => i.PK === `TXN#${tenant.tenantId}#${txn.id}`)).toEqual([]);
    const again = await api.post<TokenBody>("/tokens", { key: owner, body });
    expect(again.body.id, "deduplicated to the live token").toBe(id);
  }, 120_000);
});

describe("op items of an open transaction whose record is gone", () => {
  it("are undone by the sweep at the expiry, and the undo is audited", async () => {
    const { tenant, baseline, txn, id } = await staged({ type: "token", data: "pending" });
    await dropRecord(tenant.tenantId, txn.id);
    await advanceTestClock(svc, 3700);
    const items = await scanTable(svc);
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`)).toBeUndefined();
    expect(keyUse(items, tenant.tenantId)).toEqual(baseline);
    expect(orphanAudits(items, txn.id)).toEqual([1]);
  }, 120_000);

  it("give each reservation and claim back once, and audit each undo once, when two runs undo at once", async () => {
    const { api, tenant, owner, baseline, txn, id, existing } = await staged({
      type: "token",
      data: "dedup-me",
      deduplicate_token: true,
    });
    const patch = { "content-type": "application/merge-patch+json", "svc-transaction-id": txn.id };
    const patched = await api.patch(`/tokens/${existing}`, {
      key: owner,
      body: { data: "new" },
      headers: patch,
    });
    expect(patched.status).toBe(200);
    await dropRecord(tenant.tenantId, txn.id);
    // Both runs read the op items before either writes.
    const store = svc.service.deps.transactions as unknown as Store;
    const operations = (store.operations as (...a: unknown[]) => Promise<unknown>).bind(store);
    let read = 0;
    let bothRead: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      bothRead = resolve;
    });
    store.operations = async (...args: unknown[]) => {
      const ops = await operations(...args);
      if (++read === 2) bothRead();
      await ready;
      return ops;
    };
    try {
      await Promise.all([0, 1].map(() => rollbackExpired(svc.service.deps, tenant.tenantId, txn.id)));
    } finally {
      delete store.operations;
    }

    const items = await scanTable(svc);
    expect(keyUse(items, tenant.tenantId), "each reservation given back exactly once").toEqual(baseline);
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`)).toBeUndefined();
    expect(items.find((i) => String(i.PK).startsWith(`FP#${tenant.tenantId}#`) && i.token_id === id)).toBe(
      undefined,
    );
    const undone = orphanAudits(items, txn.id);
    expect(
      undone.every((n) => n > 0),
      "no entry for a run that undid nothing",
    ).toBe(true);
    expect(
      undone.reduce((x, y) => x + y, 0),
      "each undone operation audited once",
    ).toBe(2);
  }, 120_000);

  it("give a staged rollback's reservation back once when an orphan undo meets its op item", async () => {
    const { tenant, baseline, txn, id } = await staged({ type: "token", data: "pending" });
    const { deps } = svc.service;
    const record = await deps.transactions.get(tenant.tenantId, txn.id);
    if (!record) throw new Error("no record");
    // Right after the staged rollback's write that undoes the token, the record is gone (TTL) and another sweep
    // run's orphan undo meets the op item.
    const store = deps.transactions as unknown as Store;
    const send = (store.sendIgnoringApplied as (items: unknown[]) => Promise<boolean>).bind(store);
    let interleaved = false;
    store.sendIgnoringApplied = async (items: Record<string, unknown>[]) => {
      const first = items[0] as { Delete?: { Key?: { PK?: string } } };
      const undo = String(first.Delete?.Key?.PK ?? "").startsWith(`TOKEN#${tenant.tenantId}#`);
      const out = await send(items);
      if (!interleaved && undo) {
        interleaved = true;
        await dropRecord(tenant.tenantId, txn.id);
        await rollbackExpired(deps, tenant.tenantId, txn.id);
      }
      return out;
    };
    try {
      const system = { tenantId: tenant.tenantId, actor: { type: "system" as const } };
      const audit = auditEvent(deps, system, "transaction", txn.id, "update", "test rollback");
      await deps.transactions.rollback(record, audit, { expired: true }).catch(() => undefined);
    } finally {
      delete store.sendIgnoringApplied;
    }
    expect(interleaved).toBe(true);
    const items = await scanTable(svc);
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`)).toBeUndefined();
    expect(keyUse(items, tenant.tenantId), "the undone create's reservation given back").toEqual(baseline);
  }, 120_000);
});

describe("a token held by a transaction whose record is gone (review round 23)", () => {
  it("is deleted at its expiry, not put off at every run", async () => {
    const { api, tenant, owner, txn } = await staged({ type: "token", data: "pending" });
    const txnExpires = Date.parse(
      String((await svc.service.deps.transactions.get(tenant.tenantId, txn.id))?.expires_at),
    );
    const expiring = { type: "token", data: "x", expires_at: new Date(txnExpires + 1800_000).toISOString() };
    const token = await api.post<TokenBody>("/tokens", { key: owner, body: expiring });
    const patch = { "content-type": "application/merge-patch+json", "svc-transaction-id": txn.id };
    const patched = await api.patch(`/tokens/${token.body.id}`, {
      key: owner,
      body: { metadata: { a: "b" } },
      headers: patch,
    });
    expect(patched.status).toBe(200);
    await dropRecord(tenant.tenantId, txn.id);
    for (let i = 0; i < 8; i++) await advanceTestClock(svc, 1800); // 4 hours of runs, past both expiries
    const items = await scanTable(svc);
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${token.body.id}`)).toBeUndefined();
  }, 120_000);
});

describe("a token still held whose op item is gone (DynamoDB's TTL, which counts nothing; review round 26)", () => {
  /** A staged create, or an update needing a key set the stored version does not (a rotation first). */
  async function heldWithItemGone(kind: "create" | "update") {
    const { api, tenant, owner, baseline, txn, id, existing } = await staged({
      type: "token",
      data: "pending",
    });
    const headers = { "svc-transaction-id": txn.id, "content-type": "application/merge-patch+json" };
    if (kind === "update") {
      expect((await api.post("/tenants/self/keys/rotate", { key: tenant.managementKey })).status).toBe(200);
      const patched = await api.patch(`/tokens/${existing}`, { key: owner, body: { data: "new" }, headers });
      expect(patched.status).toBe(200);
    }
    const tokenId = kind === "create" ? id : existing;
    // The finisher has read its operations when the op item goes.
    const store = svc.service.deps.transactions as unknown as Store;
    const operations = (store.operations as (...a: unknown[]) => Promise<unknown>).bind(store);
    store.operations = async (...args: unknown[]) => {
      const ops = await operations(...args);
      const { dynamo, config } = svc.service.deps;
      const Key = transactionKeys.operation(tenant.tenantId, txn.id, tokenId);
      await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key }));
      return ops;
    };
    const record = await svc.service.deps.transactions.get(tenant.tenantId, txn.id);
    if (!record) throw new Error("no record");
    const token = async () =>
      (await scanTable(svc)).find((i) => i.PK === `TOKEN#${tenant.tenantId}#${tokenId}`) as
        | Record<string, unknown>
        | undefined;
    const restore = () => {
      delete store.operations;
    };
    return { tenant, record, baseline, token, restore };
  }

  for (const kind of ["create", "update"] as const)
    it(`gives a rolled-back ${kind}'s reservation back with the undo`, async () => {
      const { tenant, record, baseline, token, restore } = await heldWithItemGone(kind);
      const { deps } = svc.service;
      const system = { tenantId: tenant.tenantId, actor: { type: "system" as const } };
      const audit = auditEvent(deps, system, "transaction", record.id, "update", "test rollback");
      try {
        expect(await deps.transactions.rollback(record, audit, { expired: true })).toBe(true);
      } finally {
        restore();
      }
      expect((await token())?.txn_id).toBeUndefined(); // released, or the pending create deleted
      expect(keyUse(await scanTable(svc), tenant.tenantId), "the reservation given back").toEqual(baseline);
    }, 120_000);

  it("applies a committed update (its roll-forward no longer fails at every try)", async () => {
    const { tenant, record, token, restore } = await heldWithItemGone("update");
    // Committed past its commit point, its roll-forward left to the sweep.
    const { dynamo, config } = svc.service.deps;
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: transactionKeys.record(tenant.tenantId, record.id),
        UpdateExpression: "SET #state = :committed, rolling_forward = :yes",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":committed": "committed", ":yes": true },
      }),
    );
    const committed = await svc.service.deps.transactions.get(tenant.tenantId, record.id);
    try {
      await svc.service.deps.transactions.finishCommit(committed as typeof record, new Date());
    } finally {
      restore();
    }
    expect((await token())?.txn_id).toBeUndefined();
  }, 120_000);
});

describe("a transaction's items at rest", () => {
  it("keep the record a day longer than its op items (TTL deletes in any order)", async () => {
    const { tenant, txn } = await staged({ type: "token", data: "ttl" });
    const items = (await scanTable(svc)).filter((i) => i.PK === `TXN#${tenant.tenantId}#${txn.id}`);
    const record = items.find((i) => i.SK === "META");
    const operation = items.find((i) => String(i.SK).startsWith("OP#"));
    expect(Number(record?.ttl) - Number(operation?.ttl)).toBe(86_400);
  });
});
