/**
 * Finding (front-end review): an authorized session's key lookup item keeps the TTL of the 3-minute default.
 * POST /sessions/authorize may set expires_at up to 24 h after creation; the session item's `ttl` follows, but
 * the APIKEY#<hash> item (what every authentication reads first) keeps `ttl` = creation + 180 s. In AWS the
 * table's TTL (attribute `ttl`) deletes that item a few minutes later and the session key answers 401 long
 * before its expires_at. DynamoDB Local runs no TTL: the test plays it (deletes what DynamoDB would).
 */
import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { keys } from "#shared/adapters/dynamodb/schema.ts";
import { hashKey } from "#shared/ids.ts";
import { client, createTenant } from "#test/support/http.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService();

describe("an authorized session's key lookup lives as long as the session", () => {
  it("keeps the APIKEY item's ttl at or after the session's expires_at, so DynamoDB TTL never ends it early", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
    const pvt = await appKey(api, tenant.managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/pci/", transform: "mask", permissions: ["token:read"] }],
    });
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card_number", data: VISA },
    });
    const created = await api.post<{ session_key: string; nonce: string }>("/sessions", { key: pub });
    const expiresAt = new Date(svc.service.deps.clock.now().getTime() + 3600_000).toISOString();
    const authorized = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.body.nonce, permissions: ["token:read"], expires_at: expiresAt },
    });
    expect(authorized.status).toBe(200);

    const { dynamo, config } = svc.service.deps;
    const Key = keys.apiKey(hashKey(created.body.session_key));
    const item = (await dynamo.send(new GetCommand({ TableName: config.tableName, Key }))).Item;
    expect(item).toBeDefined();
    // The lookup must not be due for TTL deletion before the session expires.
    expect(Number(item?.ttl)).toBeGreaterThanOrEqual(Math.floor(Date.parse(expiresAt) / 1000));

    // What DynamoDB TTL does in AWS, 10 minutes on (the session has 50 minutes left): items past `ttl` go.
    await advanceTestClock(svc, 600);
    const nowEpoch = Math.floor(svc.service.deps.clock.now().getTime() / 1000);
    if (Number(item?.ttl) < nowEpoch)
      await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key }));
    const read = await api.get(`/tokens/${token.body.id}`, { key: created.body.session_key });
    expect(read.status).toBe(200);
  });
});
