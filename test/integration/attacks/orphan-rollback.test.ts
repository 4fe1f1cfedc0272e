/**
 * Attack (review round 24, 27 Nov 2026): the sweep's handling of a transaction whose record is gone while op items
 * remain (DynamoDB's TTL removes items in any order; since then the record outlives its op items by a day). The
 * transaction may have committed: here a one-write commit whose request died before forgetting its op items. Undone
 * as a rollback, it gave back a live token's key count a second time (the key version destroyable under it) and
 * released its deduplication claim; and the undo wrote no audit entry.
 */
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { transactionKeys } from "#shared/adapters/dynamodb/transaction-keys.ts";
import { rollbackExpired } from "#shared/domain/transactions.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();
type Store = Record<string, unknown>;

const keyUse = (items: Record<string, unknown>[], tenantId: string) => {
  const sum = new Map<string, number>();
  for (const i of items)
    if (i.PK === `TENANT#${tenantId}` && String(i.SK).startsWith("KEYUSE#"))
      sum.set(String(i.key_id), (sum.get(String(i.key_id)) ?? 0) + Number(i.tokens ?? 0));
  return Object.fromEntries(sum);
};

describe("orphan rollback of a committed transaction", () => {
  it("keeps the committed token's key count and dedup claim", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "dedup-me", deduplicate_token: true },
      headers: { "svc-transaction-id": txn.id },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;

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
    expect((await api.get(`/tokens/${id}`, { key: reader })).status).toBe(200);
    const before = keyUse(await scanTable(svc), tenant.tenantId);

    // TTL removes the record first (it outlives its op items by a day now; a sweep put off that long, or any
    // order of TTL's deletes); the X entry (or any later caller of rollbackExpired) then runs.
    const { dynamo, config } = svc.service.deps;
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: transactionKeys.record(tenant.tenantId, txn.id),
      }),
    );
    await rollbackExpired(svc.service.deps, tenant.tenantId, txn.id);

    const items = await scanTable(svc);
    const after = keyUse(items, tenant.tenantId);
    const claim = items.find((i) => String(i.PK).startsWith(`FP#${tenant.tenantId}#`));
    const audit = items.filter((i) => JSON.stringify(i).includes("whose record is gone"));
    console.log(
      "key counts after orphan rollback:",
      after,
      "| claim:",
      claim?.token_id,
      "| audit:",
      audit.length,
    );
    expect((await api.get(`/tokens/${id}`, { key: reader })).status).toBe(200); // token is live
    expect(after, "a live token's key set counted").toEqual(before);
    expect(claim?.token_id, "the live token's dedup claim").toBe(id);
    // the same value deduplicates to the live token
    const again = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "dedup-me", deduplicate_token: true },
    });
    expect(again.body.id, "deduplicated to the live token").toBe(id);
  }, 120_000);

  it("an orphan undo (open transaction, record gone) is audited", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "pending" },
      headers: { "svc-transaction-id": txn.id },
    });
    expect(created.status).toBe(201);
    const { dynamo, config } = svc.service.deps;
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: transactionKeys.record(tenant.tenantId, txn.id),
      }),
    );
    await advanceTestClock(svc, 3700);
    const items = await scanTable(svc);
    expect(items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${created.body.id}`)).toBeUndefined(); // undone
    const audit = items.filter((i) => {
      const text = JSON.stringify(i);
      return text.includes("whose record is gone") && text.includes(txn.id);
    });
    expect(audit.length, "the undo's audit entry").toBe(1);
  }, 120_000);
});

describe("a transaction's items at rest", () => {
  it("keep the record a day longer than its op items (TTL deletes in any order)", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const created = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "ttl" },
      headers: { "svc-transaction-id": txn.id },
    });
    expect(created.status).toBe(201);
    const items = (await scanTable(svc)).filter((i) => i.PK === `TXN#${tenant.tenantId}#${txn.id}`);
    const record = items.find((i) => i.SK === "META");
    const operation = items.find((i) => String(i.SK).startsWith("OP#"));
    expect(Number(record?.ttl) - Number(operation?.ttl)).toBe(86_400);
  });
});
