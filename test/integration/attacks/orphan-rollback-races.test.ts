/**
 * Attack (review round 25, 27 Nov 2026): undoOrphan (a transaction's op items whose record is gone) against
 * concurrent finishers.
 * A: two runs at once (two sweep invocations, or the T-entry and X-entry paths): each reservation and claim given
 *    back exactly once; the audit trail says what each run did (no duplicate "rolled back" entry).
 * B: a committed transaction's orphan items: nothing is undone, so no entry may say it was rolled back.
 * C: a staged rollback (record present) and undoOrphan (record removed by TTL meanwhile) on the same op.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { transactionKeys } from "#shared/adapters/dynamodb/transaction-keys.ts";
import { auditEvent } from "#shared/domain/audit-entry.ts";
import { rollbackExpired } from "#shared/domain/transactions.ts";
import { useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();
type Store = Record<string, unknown>;
const mergePatch = { "content-type": "application/merge-patch+json" };

const keyUse = (items: Record<string, unknown>[], tenantId: string) => {
  const sum = new Map<string, number>();
  for (const i of items)
    if (i.PK === `TENANT#${tenantId}` && String(i.SK).startsWith("KEYUSE#"))
      sum.set(String(i.key_id), (sum.get(String(i.key_id)) ?? 0) + Number(i.tokens ?? 0));
  return Object.fromEntries([...sum].filter(([, n]) => n !== 0));
};
const orphanAudits = (items: Record<string, unknown>[], txnId: string) =>
  items.filter((i) => {
    const text = JSON.stringify(i);
    return String(i.PK).includes("#LOG#") && text.includes("whose record is gone") && text.includes(txnId);
  });

async function dropRecord(tenantId: string, txnId: string) {
  const { dynamo, config } = svc.service.deps;
  await dynamo.send(
    new DeleteCommand({ TableName: config.tableName, Key: transactionKeys.record(tenantId, txnId) }),
  );
}

describe("A: two undoOrphan runs at once", () => {
  it("give each reservation and claim back once, and audit once", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const existing = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "old" },
    });
    expect(existing.status).toBe(201);
    const baseline = keyUse(await scanTable(svc), tenant.tenantId);

    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const headers = { "svc-transaction-id": txn.id };
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "dedup-me", deduplicate_token: true },
      headers,
    });
    expect(created.status).toBe(201);
    const patched = await api.patch(`/tokens/${existing.body.id}`, {
      key: owner,
      body: { data: "new" },
      headers: { ...mergePatch, ...headers },
    });
    expect(patched.status).toBe(200);
    await dropRecord(tenant.tenantId, txn.id);

    // Both runs read the op items before either writes.
    const store = svc.service.deps.transactions as unknown as Store;
    const operations = (store.operations as (...a: unknown[]) => Promise<unknown>).bind(store);
    let waiting = 0;
    let release: () => void = () => {};
    const bothRead = new Promise<void>((r) => {
      release = r;
    });
    store.operations = async (...args: unknown[]) => {
      const ops = await operations(...args);
      if (++waiting === 2) release();
      await bothRead;
      return ops;
    };
    try {
      await Promise.all([
        rollbackExpired(svc.service.deps, tenant.tenantId, txn.id),
        rollbackExpired(svc.service.deps, tenant.tenantId, txn.id),
      ]);
    } finally {
      delete store.operations;
    }

    const items = await scanTable(svc);
    console.log("A: key counts", baseline, "->", keyUse(items, tenant.tenantId));
    expect(keyUse(items, tenant.tenantId), "each reservation given back exactly once").toEqual(baseline);
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${created.body.id}`)).toBeUndefined();
    expect(
      items.find((i) => String(i.PK).startsWith(`FP#${tenant.tenantId}#`) && i.token_id === created.body.id),
    ).toBeUndefined();
    expect(items.filter((i) => i.PK === `TXN#${tenant.tenantId}#${txn.id}`)).toEqual([]);
    const audits = orphanAudits(items, txn.id);
    console.log(
      "A: orphan audit entries:",
      audits.map((a) => a.message),
    );
    // Each entry records what its run undid: every operation exactly once across them, no empty entry.
    const counts = audits.map((a) =>
      Number(/\((\d+) of \d+ undone\)/.exec(String(a.message))?.[1] ?? Number.NaN),
    );
    expect(
      counts.every((n) => n > 0),
      "no entry for a run that undid nothing",
    ).toBe(true);
    expect(
      counts.reduce((x, y) => x + y, 0),
      "each undone operation audited once",
    ).toBe(2);
  }, 120_000);
});

describe("B: a committed transaction's orphan items", () => {
  it("are not audited as rolled back (nothing was undone)", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "kept" },
      headers: { "svc-transaction-id": txn.id },
    });
    expect(created.status).toBe(201);
    const store = svc.service.deps.transactions as unknown as Store;
    const forget = store.forgetOperations;
    store.forgetOperations = () => Promise.reject(new Error("simulated crash"));
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: owner }).finally(() => {
      store.forgetOperations = forget;
    });
    expect(commit.status).toBe(500);
    await dropRecord(tenant.tenantId, txn.id);
    await rollbackExpired(svc.service.deps, tenant.tenantId, txn.id);

    expect((await api.get(`/tokens/${created.body.id}`, { key: reader })).status).toBe(200); // committed, live
    const audits = orphanAudits(await scanTable(svc), txn.id);
    console.log(
      "B: audit entries:",
      audits.map((a) => a.message),
    );
    expect(audits, "no entry says a committed transaction's operations were rolled back").toEqual([]);
  }, 120_000);
});

describe("C: a staged rollback and undoOrphan on the same op", () => {
  it("give the reservation back once (not zero times)", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const baseline = keyUse(await scanTable(svc), tenant.tenantId);
    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "pending" },
      headers: { "svc-transaction-id": txn.id },
    });
    expect(created.status).toBe(201);
    const { deps } = svc.service;
    const record = await deps.transactions.get(tenant.tenantId, txn.id);
    if (!record) throw new Error("no record");

    // The staged rollback undoes the token; before it forgets the op item (with the counters), the record is gone
    // (TTL) and another sweep run's undoOrphan meets the op item.
    const store = deps.transactions as unknown as Store;
    const send = (store.sendIgnoringApplied as (items: unknown[]) => Promise<boolean>).bind(store);
    let interleaved = false;
    store.sendIgnoringApplied = async (items: Record<string, unknown>[]) => {
      // Right after the staged rollback's write that undoes the token (a pending create's delete).
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
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${created.body.id}`)).toBeUndefined();
    console.log("C: key counts", baseline, "->", keyUse(items, tenant.tenantId));
    expect(keyUse(items, tenant.tenantId), "the reservation of the undone create given back").toEqual(
      baseline,
    );
  }, 120_000);
});
