/**
 * Attack (review round 23, 27 Nov 2026): the sweep against what happens meanwhile.
 * A: the cvc's removal read the token's hold, cleaned that transaction's op item, then removed the token's cvc; a
 *    transaction that staged the token in between kept the expired sealed cvc in its op item (its re-put C entry
 *    has the key of the one being processed, and was deleted with it).
 * B: a token whose lapsed lock names a transaction whose record is gone (TTL order) while its op item stays was
 *    put off for good at every run, the expired token kept at rest.
 */
import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { transactionKeys } from "#shared/adapters/dynamodb/transaction-keys.ts";
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

async function owner() {
  const { api, tenant } = await tenantWithOwner(svc);
  const key = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
    rules: revealEverything,
  });
  return { api, tenant, key };
}

describe("A: removeCvc against a transaction that stages the token meanwhile", () => {
  it("leaves no sealed cvc in the op item past its hour", async () => {
    const { api, tenant, key } = await owner();
    const card = await api.post<TokenBody>("/tokens", {
      key,
      body: { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2031, cvc: "123" } },
    });
    expect(card.status).toBe(201);
    const id = card.body.id;
    let txnId: string | undefined;
    const sweep = svc.service.deps.sweep as unknown as { client: { send: (c: unknown) => Promise<unknown> } };
    const client = sweep.client;
    sweep.client = {
      send: async (command: unknown) => {
        const out = await client.send(command as never);
        const input = (command as { input?: Record<string, unknown> }).input;
        const k = input?.Key as { PK?: string } | undefined;
        if (
          !txnId &&
          String(input?.ProjectionExpression ?? "").startsWith("txn_id") &&
          k?.PK === `TOKEN#${tenant.tenantId}#${id}`
        ) {
          // Between removeCvc's read of txn_id (none) and its update of the token: a PATCH joins a transaction.
          txnId = (await api.post<{ id: string }>("/transactions", { key })).body.id;
          const patched = await api.patch(`/tokens/${id}`, {
            key,
            body: { metadata: { a: "b" } },
            headers: { ...mergePatch, "svc-transaction-id": txnId },
          });
          expect(patched.status).toBe(200);
        }
        return out;
      },
    } as never;
    try {
      await advanceTestClock(svc, 3700); // the cvc's hour is over: the C entry runs
    } finally {
      sweep.client = client;
    }
    expect(txnId).toBeDefined();
    const items = await scanTable(svc);
    const token = items.find((i) => i.PK === `TOKEN#${tenant.tenantId}#${id}`);
    expect(token?.sealed_cvc).toBeUndefined(); // the token's cvc went
    const cEntries = items.filter((i) => i.entity === "sweep" && i.kind === "C" && i.token_id === id);
    const op = items.find(
      (i) => i.PK === transactionKeys.operation(tenant.tenantId, String(txnId), id).PK && i.SK === `OP#${id}`,
    );
    await advanceTestClock(svc, 1800); // half an hour more, the transaction still open
    const later = (await scanTable(svc)).find(
      (i) => i.entity === "transaction_operation" && i.token_id === id,
    );
    console.log(
      "C entries left:",
      cEntries.length,
      "| op next keys now:",
      Object.keys((later?.next as object) ?? {}),
    );
    expect(op?.next, "op item right after the sweep").not.toHaveProperty("sealed_cvc");
    expect(later?.next, "op item 30 min after the cvc's hour").not.toHaveProperty("sealed_cvc");
  }, 120_000);
});

describe("B: an op item whose transaction record is gone", () => {
  const run = async (dropRecord: boolean) => {
    const { api, tenant, key } = await owner();
    const txn = (await api.post<{ id: string; expires_at: string }>("/transactions", { key })).body;
    const txnExpires = Date.parse(txn.expires_at);
    const token = await api.post<TokenBody>("/tokens", {
      key,
      body: { type: "token", data: "x", expires_at: new Date(txnExpires + 1800_000).toISOString() },
    });
    expect(token.status).toBe(201);
    const id = token.body.id;
    const patched = await api.patch(`/tokens/${id}`, {
      key,
      body: { metadata: { a: "b" } },
      headers: { ...mergePatch, "svc-transaction-id": txn.id },
    });
    expect(patched.status).toBe(200);
    const { dynamo, config } = svc.service.deps;
    if (dropRecord)
      await dynamo.send(
        new DeleteCommand({
          TableName: config.tableName,
          Key: transactionKeys.record(tenant.tenantId, txn.id),
        }),
      );
    for (let i = 0; i < 8; i++) await advanceTestClock(svc, 1800); // 4 hours of runs, past both expiries
    const stored = await dynamo.send(
      new GetCommand({
        TableName: config.tableName,
        Key: tokenKeys.token(tenant.tenantId, id),
        ConsistentRead: true,
      }),
    );
    const entries = (await scanTable(svc)).filter((i) => i.entity === "sweep" && i.token_id === id);
    return { stored: stored.Item, entries };
  };

  it("control: with the record, the expired token is deleted", async () => {
    const { stored } = await run(false);
    expect(stored).toBeUndefined();
  }, 120_000);

  it("attack: without the record, the expired token is still deleted (not deferred forever)", async () => {
    const { stored, entries } = await run(true);
    console.log(
      "token kept:",
      Boolean(stored),
      "| its T entries:",
      entries.map((e) => `${e.due_at} attempts=${e.attempts ?? 0}`),
    );
    expect(stored, "expired token still stored 3.5 h past its expiry").toBeUndefined();
  }, 120_000);
});
