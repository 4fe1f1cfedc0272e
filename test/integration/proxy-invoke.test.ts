import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoProxyStore } from "#shared/adapters/dynamodb/proxy-store.ts";
import { auditEntry } from "#shared/domain/audit-entry.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

const received: Received[] = [];
const destination = useLocalServer((req, res, body) => {
  received.push({ method: String(req.method), url: String(req.url), headers: req.headers, body });
  if (req.url?.includes("/binary")) {
    res.writeHead(200, { "content-type": "application/octet-stream", "x-echo": "bin" });
    res.end(body);
    return;
  }
  res.writeHead(req.url?.includes("/teapot") ? 418 : 200, {
    "content-type": "application/json",
    "x-destination": "yes",
  });
  res.end(JSON.stringify({ echoed: body.toString("utf8"), path: req.url }));
});

async function setup(proxy: Record<string, unknown> = {}) {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const user = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:use"] });
  const created = await api.post<{ id: string; key: string }>("/proxies", {
    key: tenant.managementKey,
    body: { name: "test", destination_url: `${destination.url}/base/`, ...proxy },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const token = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card_number", data: VISA } });
  const card = await api.post<TokenBody>("/tokens", {
    key: pub,
    body: { type: "card", data: { number: VISA, expiration_month: 4, expiration_year: 2031 } },
  });
  return { api, ...tenant, pub, user, proxy: created.body, token: token.body, card: card.body };
}

const last = () => received.at(-1) as Received;

/** A require_auth=false proxy whose application (private, token:use) detokenizes; `call` sends a card token. */
async function openProxy() {
  const { api, managementKey, applicationId, key } = await createOpenProxy(
    svc.url,
    svc.rootKey,
    `${destination.url}/base/`,
  );
  const pub = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
  const token = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card_number", data: VISA } });
  const call = () =>
    api.post<{ proxy_error?: { status: number } }>("/proxy", {
      headers: { "svc-proxy-key": key },
      body: { n: `{{ ${token.body.id} }}` },
    });
  return { api, call, managementKey, applicationId };
}

describe("proxy invocation", () => {
  it("forwards method, path suffix, query and headers, detokenizing JSON, and answers the destination's response", async () => {
    const { api, proxy, user, token, card } = await setup();

    const res = await api.post<{ echoed: string; path: string }>(
      `/proxy/charges/1?expand=all&svc-proxy-key=${proxy.key}`,
      {
        key: user,
        headers: { authorization: "Bearer dest-secret", "x-custom": "kept" },
        body: {
          number: `{{ ${token.id} }}`,
          last4: `{{ token: ${token.id} | last4 }}`,
          card: `{{ ${card.id} }}`,
          note: `n:{{${token.id}}}`,
        },
      },
    );

    expect(res.status).toBe(200);
    expect(res.headers.get("svc-proxy-destination-status")).toBe("200");
    expect(res.headers.get("x-destination")).toBe("yes");
    expect(last().method).toBe("POST");
    expect(last().url).toBe("/base/charges/1?expand=all");
    expect(last().headers.authorization).toBe("Bearer dest-secret");
    expect(last().headers["x-custom"]).toBe("kept");
    expect(last().headers["svc-api-key"]).toBeUndefined();
    expect(last().headers["svc-proxy-key"]).toBeUndefined();
    expect(JSON.parse(last().body.toString("utf8"))).toEqual({
      number: VISA,
      last4: "4242",
      card: { number: VISA, expiration_month: 4, expiration_year: 2031 },
      note: `n:${VISA}`,
    });
  });

  it("detokenizes text bodies, passes binary bodies unchanged both ways, and passes the destination status", async () => {
    const { api, proxy, user, token } = await setup();
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

    const text = await api.call("PUT", "/proxy/text", {
      key: user,
      headers: { "svc-proxy-key": proxy.key, "content-type": "text/plain" },
      rawBody: `card={{ ${token.id} }}`,
    });
    const sentText = last().body.toString("utf8");
    const before = received.length;
    const binary = await fetch(`${svc.url}/proxy/binary`, {
      method: "POST",
      headers: {
        "svc-proxy-key": proxy.key,
        "svc-api-key": user,
        "content-type": "application/octet-stream",
      },
      body: bytes,
    });
    const binaryBack = Buffer.from(await binary.arrayBuffer());
    const sentBinary = received[before]?.body;
    const teapot = await api.get("/proxy/teapot", { key: user, headers: { "svc-proxy-key": proxy.key } });

    expect(text.status).toBe(200);
    expect(sentText).toBe(`card=${VISA}`);
    expect(binary.status).toBe(200);
    expect(sentBinary?.toString("hex")).toBe(bytes.toString("hex"));
    expect(binaryBack.toString("hex")).toBe(bytes.toString("hex"));
    expect(teapot.status).toBe(418);
    expect(teapot.headers.get("svc-proxy-destination-status")).toBe("418");
  });

  it("injects SVC-PROXY-KEEP-ALIVE and SVC-PROXY-CONNECTION as Keep-Alive and Connection", async () => {
    const { api, proxy, user } = await setup();

    await api.get("/proxy/ka", {
      key: user,
      headers: {
        "svc-proxy-key": proxy.key,
        "svc-proxy-keep-alive": "timeout=5",
        "svc-proxy-connection": "keep-alive",
      },
    });

    expect(last().headers["keep-alive"]).toBe("timeout=5");
    expect(last().headers.connection).toBe("keep-alive");
  });

  it("refuses before sending: unknown token 400, forbidden token 403, both as proxy_error", async () => {
    const { api, proxy, managementKey, token } = await setup();
    const bankOnly = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/bank/", transform: "reveal", permissions: ["token:use"] }],
    });
    const before = received.length;

    const unknown = await api.post<{ proxy_error: { status: number } }>("/proxy/x", {
      key: bankOnly,
      headers: { "svc-proxy-key": proxy.key },
      body: { n: "{{ no-such-token }}" },
    });
    const forbidden = await api.post<{ proxy_error: { status: number; detail: string } }>("/proxy/x", {
      key: bankOnly,
      headers: { "svc-proxy-key": proxy.key },
      body: { n: `{{ ${token.id} }}` },
    });

    expect(unknown.status).toBe(400);
    expect(unknown.body.proxy_error.status).toBe(400);
    expect(unknown.headers.get("svc-proxy-destination-status")).toBeNull();
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.proxy_error.status).toBe(403);
    expect(JSON.stringify(forbidden.body)).not.toContain(VISA);
    expect(received.length).toBe(before);
  });

  it("requires SVC-API-KEY with token:use when require_auth is on, even with nothing to detokenize", async () => {
    const { api, proxy, pub } = await setup();
    const before = received.length;

    const noKey = await api.get("/proxy/x", { headers: { "svc-proxy-key": proxy.key } });
    const noTokenUse = await api.get("/proxy/x", { key: pub, headers: { "svc-proxy-key": proxy.key } });
    const badProxyKey = await api.get("/proxy/x", { headers: { "svc-proxy-key": "key_prx_nope" } });
    const noProxyKey = await api.get("/proxy/x");

    expect(noKey.status).toBe(401);
    expect(noKey.body).toHaveProperty("proxy_error");
    expect(noTokenUse.status).toBe(403);
    expect(badProxyKey.status).toBe(401);
    expect(noProxyKey.status).toBe(401);
    expect(received.length).toBe(before);
  });

  it("lets anyone with the proxy key call a require_auth=false proxy, detokenizing with its application", async () => {
    const { call } = await openProxy();

    const res = await call();

    expect(res.status).toBe(200);
    expect(JSON.parse(last().body.toString("utf8"))).toEqual({ n: VISA });
  });

  it("detokenizes with the proxy application's current access: a change to it applies to the next call", async () => {
    const { api, call, managementKey, applicationId } = await openProxy();

    const before = await call();
    const changed = await api.put(`/applications/${applicationId}`, {
      key: managementKey,
      body: { name: "proxy app", type: "private", permissions: ["token:read"] },
    });
    const after = await call();

    expect(before.status).toBe(200);
    expect(changed.status).toBe(200);
    expect(after.status).toBe(403);
    expect(after.body.proxy_error?.status).toBe(403);
  });

  it("logs each invocation and each detokenized token, without bodies", async () => {
    const { api, proxy, user, token, managementKey } = await setup();
    await api.post("/proxy", {
      key: user,
      headers: { "svc-proxy-key": proxy.key },
      body: { n: `{{ ${token.id} }}` },
    });

    const proxyLogs = await api.get<{ data: { operation: string; message: string }[] }>(
      `/logs?entity_id=${proxy.id}`,
      {
        key: managementKey,
      },
    );
    const tokenLogs = await api.get<{ data: { operation: string }[] }>(`/logs?entity_id=${token.id}`, {
      key: managementKey,
    });

    expect(proxyLogs.body.data.map((l) => l.operation)).toContain("invoke");
    expect(tokenLogs.body.data.map((l) => l.operation)).toContain("read");
    expect(JSON.stringify(proxyLogs.body)).not.toContain(VISA);
  });
});

describe("proxy changes and the proxy-key cache", () => {
  const invoke = (api: ReturnType<typeof client>, proxyKey: string, userKey: string) =>
    api.get("/proxy/cached", { key: userKey, headers: { "svc-proxy-key": proxyKey } });

  it("a proxy replaced or deleted through the API takes effect on the very next invocation", async () => {
    const { api, proxy, user, managementKey } = await setup();
    expect((await invoke(api, proxy.key, user)).status).toBe(200);

    const replaced = await api.put(`/proxies/${proxy.id}`, {
      key: managementKey,
      body: { name: "moved", destination_url: `${destination.url}/base/v2/` },
    });
    const afterReplace = await invoke(api, proxy.key, user);
    const deleted = await api.delete(`/proxies/${proxy.id}`, { key: managementKey });
    const afterDelete = await invoke(api, proxy.key, user);

    expect(replaced.status).toBe(200);
    expect(afterReplace.status).toBe(200);
    expect(last().url).toBe("/base/v2/cached");
    expect(deleted.status).toBe(204);
    expect(afterDelete.status).toBe(401);
  });

  it("a proxy deleted by another process stops working here within the cache time (5 s)", async () => {
    const { api, proxy, user, tenantId } = await setup();
    expect((await invoke(api, proxy.key, user)).status).toBe(200);
    const { deps } = svc.service;
    // Another function instance: the same table, without this process's cache.
    const elsewhere = new DynamoProxyStore(
      deps.dynamo,
      deps.config.tableName,
      new AuditItems(deps.config.tableName, deps.config.logRetentionDays),
    );
    const stored = await elsewhere.get(tenantId, proxy.id);
    if (!stored) throw new Error("the proxy was not stored");
    await elsewhere.delete(
      stored,
      auditEntry(
        deps.clock.now(),
        { type: "system" },
        {
          tenantId,
          entityType: "proxy",
          entityId: proxy.id,
          operation: "delete",
          message: "Proxy deleted",
        },
      ),
    );

    const cached = await invoke(api, proxy.key, user);
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 5 } });
    const expired = await invoke(api, proxy.key, user);

    expect(cached.status).toBe(200);
    expect(expired.status).toBe(401);
  });
});
