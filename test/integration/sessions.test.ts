import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { keys } from "#shared/adapters/dynamodb/schema.ts";
import { hashKey } from "#shared/ids.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, application, type TokenBody, type TokenPage, VISA } from "#test/support/tokens.ts";

const svc = useService();

type Created = { session_key: string; nonce: string; expires_at: string };

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const pvt = await appKey(api, tenant.managementKey, {
    type: "private",
    rules: [
      { priority: 1, container: "/pci/", transform: "reveal", permissions: ["token:read", "token:use"] },
      { priority: 2, container: "/general/", transform: "mask", permissions: ["token:read"] },
    ],
  });
  const session = async () => {
    const res = await api.post<Created>("/sessions", { key: pub });
    expect(res.status).toBe(201);
    return res.body;
  };
  return { api, ...tenant, pub, pvt, session };
}

describe("sessions", () => {
  it("creates a session key with a nonce that expires in 3 minutes, and no access before authorization", async () => {
    const { api, session, pub } = await setup();
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card_number", data: VISA },
    });

    const created = await session();
    const read = await api.get(`/tokens/${token.body.id}`, { key: created.session_key });
    const other = await api.get("/applications", { key: created.session_key });

    expect(created.session_key).toMatch(/^key_ses_/);
    expect(created.nonce.length).toBeGreaterThanOrEqual(20);
    expect(Date.parse(created.expires_at) - svc.service.deps.clock.now().getTime()).toBeLessThanOrEqual(
      180_000,
    );
    expect(Date.parse(created.expires_at) - svc.service.deps.clock.now().getTime()).toBeGreaterThan(170_000);
    expect(read.status).toBe(403);
    expect(other.status).toBe(403);
  });

  it("grants exactly the authorized rules, with conditions on id and container", async () => {
    const { api, session, pub, pvt } = await setup();
    const a = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card_number", data: VISA } });
    const b = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card_number", data: "5555555555554444" },
    });
    const created = await session();

    const authorized = await api.post("/sessions/authorize", {
      key: pvt,
      body: {
        nonce: created.nonce,
        rules: [
          {
            priority: 1,
            conditions: [{ attribute: "id", operator: "equals", value: a.body.id }],
            transform: "reveal",
            permissions: ["token:read"],
          },
        ],
      },
    });
    const readA = await api.get<TokenBody>(`/tokens/${a.body.id}`, { key: created.session_key });
    const readB = await api.get(`/tokens/${b.body.id}`, { key: created.session_key });
    const list = await api.get<TokenPage>("/tokens", { key: created.session_key });
    const createAttempt = await api.post("/tokens", {
      key: created.session_key,
      body: { type: "token", data: "x" },
    });

    expect(authorized.status).toBe(200);
    expect(authorized.body).toBeUndefined();
    expect(readA.body.data).toBe(VISA);
    expect(readB.status).toBe(403);
    expect(list.body.data.map((t) => t.id)).toEqual([a.body.id]);
    expect(createAttempt.status).toBe(403);
  });

  it("never gives a session more than its authorizing application", async () => {
    const { api, session, pub, pvt } = await setup();
    const general = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "masked only" },
    });
    const created = await session();

    const beyond = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.nonce, permissions: ["token:delete"] },
    });
    await api.post("/sessions/authorize", {
      key: pvt,
      body: {
        nonce: created.nonce,
        rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
      },
    });
    const read = await api.get<TokenBody>(`/tokens/${general.body.id}`, { key: created.session_key });

    expect(beyond.status).toBe(403);
    // The session asked for reveal everywhere; the application only masks /general/: masked it is.
    expect(read.status).toBe(200);
    expect(read.body.data).toBeUndefined();
  });

  it("ends a session when the application that created it is deleted, authorized or not", async () => {
    const { api, managementKey, pvt } = await setup();
    const pub = await application(api, managementKey, { type: "public", permissions: ["token:create"] });
    const token = await api.post<TokenBody>("/tokens", {
      key: pub.key,
      body: { type: "card_number", data: VISA },
    });
    const authorized = (await api.post<Created>("/sessions", { key: pub.key })).body;
    const pending = (await api.post<Created>("/sessions", { key: pub.key })).body;
    const grant = {
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    };
    await api.post("/sessions/authorize", { key: pvt, body: { nonce: authorized.nonce, ...grant } });
    expect((await api.get(`/tokens/${token.body.id}`, { key: authorized.session_key })).status).toBe(200);

    // The merchant retires its checkout application (a leaked page, a rebuilt front end).
    expect((await api.delete(`/applications/${pub.id}`, { key: managementKey })).status).toBe(204);

    // It was: the authorized session still read the card (200) from anywhere without an Origin, and the pending
    // one could still be authorized within its 3 minutes.
    expect((await api.get(`/tokens/${token.body.id}`, { key: authorized.session_key })).status).toBe(401);
    const late = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: pending.nonce, ...grant },
    });
    expect(late.status).toBe(404);
    expect((await api.get(`/tokens/${token.body.id}`, { key: pending.session_key })).status).toBe(401);
  });

  it("validates authorization: empty grants 400, unknown nonce 404, a second use 409, wrong key kinds 403", async () => {
    const { api, session, pub, pvt, managementKey } = await setup();
    const other = await setup();
    const created = await session();

    const empty = await api.post("/sessions/authorize", { key: pvt, body: { nonce: created.nonce } });
    const unknown = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: "nope", permissions: ["token:read"] },
    });
    const crossTenant = await api.post("/sessions/authorize", {
      key: other.pvt,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });
    const withPublic = await api.post("/sessions/authorize", {
      key: pub,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });
    const first = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });
    const replay = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });
    const mgmtCreate = await api.post("/sessions", { key: managementKey });

    expect(empty.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(crossTenant.status).toBe(404);
    expect(withPublic.status).toBe(403);
    expect(first.status).toBe(200);
    expect(replay.status).toBe(409);
    expect(mgmtCreate.status).toBe(403);
  });

  it("refuses the key from expires_at on, and the sweep removes it from the store", async () => {
    const { api, session, pub, pvt } = await setup();
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card_number", data: VISA },
    });
    const created = await session();
    await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });
    const before = await api.get(`/tokens/${token.body.id}`, { key: created.session_key });

    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 181 } });
    const after = await api.get(`/tokens/${token.body.id}`, { key: created.session_key });
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });
    const stored = await svc.service.deps.dynamo.send(
      new GetCommand({
        TableName: svc.service.deps.config.tableName,
        Key: keys.apiKey(hashKey(created.session_key)),
      }),
    );
    const lateAuthorize = await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });

    expect(before.status).toBe(200);
    expect(after.status).toBe(401);
    expect(stored.Item).toBeUndefined();
    expect(lateAuthorize.status).toBe(404);
  });

  it("logs session creation and authorization without keys or nonces", async () => {
    const { api, session, pvt, managementKey } = await setup();
    const created = await session();
    await api.post("/sessions/authorize", {
      key: pvt,
      body: { nonce: created.nonce, permissions: ["token:read"] },
    });

    const logs = await api.get<{ data: { entity_type: string; operation: string }[] }>(
      "/logs?entity_type=session",
      {
        key: managementKey,
      },
    );

    expect(logs.body.data.map((l) => l.operation)).toEqual(["update", "create"]);
    expect(JSON.stringify(logs.body)).not.toContain(created.session_key);
    expect(JSON.stringify(logs.body)).not.toContain(created.nonce);
  });
});
