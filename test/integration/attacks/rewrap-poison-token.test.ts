import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, tenantWithOwner, VISA } from "#test/support/tokens.ts";

/**
 * Review (key custody, 28 Nov 2026): search indexes were rendered on a card's data with its cvc, which is readable
 * for one hour only. An index of the cvc kept it searchable, so guessable in 1,000 searches, for the token's life;
 * and an index whose render needs the cvc (an hmac secret) rendered at the create and failed at every rewrap: one
 * such token, planted with a public key, failed its whole page every time, so the job never finished, no HMAC
 * version was retired (rotations then 409) and no old data-key version could be destroyed.
 */
const svc = useService();

interface Job {
  id: string;
  status: string;
  done: number;
  skipped: number;
}

const card = { number: VISA, expiration_month: 12, expiration_year: 2031, cvc: "123" };

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc, revealEverything);
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  return { api, ...tenant, owner, pub };
}

describe("attack: search indexes (and ids) of a card's cvc", () => {
  it("renders indexes and ids without the cvc: it is never indexed, and an index that needs it is refused (400)", async () => {
    const { api, owner, pub } = await setup();
    const indexed = await api.post<{ id: string }>("/tokens", {
      key: pub,
      body: { type: "card", data: card, search_indexes: ["{{ data.cvc }}", "{{ data.number }}"] },
    });
    expect(indexed.status).toBe(201);
    const search = (query: string) =>
      api.post<{ data: { id: string }[] }>("/v2/tokens/search", { key: owner, body: { query } });
    expect((await search(`data:${VISA}`)).body.data.map((t) => t.id)).toEqual([indexed.body.id]);
    expect((await search("data:123")).body.data).toEqual([]);

    // Nor does an id rendered from the data hold it (an id outlives the cvc's hour too).
    const byId = await api.post<{ id: string }>("/tokens", {
      key: pub,
      body: { type: "card", data: card, id: "card-{{ data.number | slice: -4, 4 }}{{ data.cvc }}" },
    });
    expect(byId.status).toBe(201);
    expect(byId.body.id).toBe(`card-${VISA.slice(-4)}`);

    const needsCvc = await api.post("/tokens", {
      key: pub,
      body: { type: "card", data: card, search_indexes: ["{{ data.number | hmac: data.cvc }}"] },
    });
    expect(needsCvc.status).toBe(400);
  });

  it("a rewrap leaves a token whose index no longer renders (skipped, under its keys) and re-seals the others", async () => {
    const { api, owner, managementKey: mgt, tenantId } = await setup();
    for (let i = 0; i < 3; i++) {
      const plain = await api.post("/tokens", {
        key: owner,
        body: { type: "token", data: `value ${i}`, search_indexes: ["{{ data }}"] },
      });
      expect(plain.status).toBe(201);
    }
    const poison = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: { type: "card", data: card, search_indexes: ["{{ data.number }}"] },
    });
    expect(poison.status).toBe(201);
    // As a version before 28 Nov 2026 stored it: an index rendered with the cvc, which no longer renders.
    const { dynamo, config } = svc.service.deps;
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: tokenKeys.token(tenantId, poison.body.id),
        UpdateExpression: "SET search_indexes = :indexes",
        ExpressionAttributeValues: { ":indexes": ["{{ data.number | hmac: data.cvc }}"] },
      }),
    );

    expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
    const started = await api.post<Job>("/tenants/self/keys/rewrap", { key: mgt });
    expect(started.status).toBe(202);
    // Its pages run on the in-process rewrap queue: done when it is idle (however slow the machine).
    await svc.service.deps.rewrapQueue.idle();
    const job = (await api.get<Job>(`/tenants/self/keys/rewrap/${started.body.id}`, { key: mgt })).body;
    expect(job).toMatchObject({ status: "succeeded", done: 4, skipped: 1 });

    // The other tokens are under the new keys; the poisoned one still opens under its own.
    const keys = await api.get<{ current: number; versions: { version: number; tokens: number | null }[] }>(
      "/tenants/self/keys",
      { key: mgt },
    );
    expect(keys.body.versions.find((v) => v.version === keys.body.current)?.tokens).toBe(3);
    const read = await api.get<{ data: { number: string } }>(`/tokens/${poison.body.id}`, { key: owner });
    expect(read.status).toBe(200);
    expect(read.body.data.number).toBe(VISA);
  });
});
