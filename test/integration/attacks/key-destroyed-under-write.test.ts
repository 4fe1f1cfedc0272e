import { ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { KEY_COUNT_SHARDS, keyCountKeys } from "#shared/adapters/dynamodb/key-counters.ts";
import { useService } from "#test/support/service.ts";
import { tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService();

/**
 * Found by `npm run fuzz` (seed 567404682): a POST /tokenize in flight while the tenant was deleted (its key
 * counters marked destroyed) answered 500 TransactionCanceledException. A write sealing under a key version whose
 * counters are marked (a destroy, or the tenant's deletion, by another process) refuses itself: nothing stored,
 * and the caller gets a 409 it can retry, from every path that writes tokens.
 */
describe("attack: writing under a key destroyed meanwhile", () => {
  it("POST /tokens, POST /tokenize (one transaction and staged) answer 409; nothing is stored", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const card = { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2030 } };
    const first = await api.post<{ id: string; tenant_id: string }>("/tokens", { key: owner, body: card });
    expect(first.status).toBe(201);
    const tenantId = first.body.tenant_id;
    const count = async () =>
      (await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: owner })).body
        .pagination.total_items;

    // Another process destroys what the keys this process holds seal under: every counter shard marked.
    const { dynamo, config } = svc.service.deps;
    const shards = await dynamo.send(
      new ScanCommand({
        TableName: config.tableName,
        FilterExpression: "PK = :pk AND begins_with(SK, :use)",
        ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":use": "KEYUSE#" },
      }),
    );
    const refs = new Set((shards.Items ?? []).map((item) => String(item.key_id)));
    expect(refs.size).toBeGreaterThan(0);
    for (const ref of refs)
      for (let shard = 0; shard < KEY_COUNT_SHARDS; shard++)
        await dynamo.send(
          new UpdateCommand({
            TableName: config.tableName,
            Key: keyCountKeys.shard(tenantId, ref, shard),
            UpdateExpression: "SET destroyed_at = :now",
            ExpressionAttributeValues: { ":now": new Date().toISOString() },
          }),
        );

    const created = await api.post("/tokens", { key: owner, body: card });
    const batch = await api.post("/tokenize", { key: owner, body: [card, "a", 1] });
    const staged = await api.post("/tokenize", {
      key: owner,
      body: Array.from({ length: 120 }, (_, i) => `value ${i}`),
    });
    for (const res of [created, batch, staged]) {
      expect(res.status).toBe(409);
      expect((res.body as { detail: string }).detail).toMatch(/destroyed meanwhile/);
    }
    expect(await count()).toBe(1);
  });
});
