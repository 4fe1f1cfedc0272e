import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });

const received: { headers: IncomingMessage["headers"]; body: string; url: string }[] = [];
const destination = useLocalServer((req, res, body) => {
  received.push({ headers: req.headers, body: body.toString(), url: String(req.url) });
  res.writeHead(201, { "content-type": "application/json", "x-from": "destination" });
  res.end(JSON.stringify({ card: "4242424242424242", status: "ok" }));
});

async function setup(proxy: Record<string, unknown>) {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const pvt = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: {
      name: "transform app",
      type: "private",
      permissions: ["token:create", "token:read", "token:use"],
    },
  });
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const created = await api.post<{ id: string; key: string }>("/proxies", {
    key: tenant.managementKey,
    body: { name: "t", destination_url: destination.url, application: { id: pvt.body.id }, ...proxy },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { api, ...tenant, user: pvt.body.key, pub, proxyKey: created.body.key };
}

describe("proxy transforms", () => {
  it("runs the request transform with the spec's inputs and forwards its body and headers (header-name rule)", async () => {
    const { api, user, proxyKey, pub } = await setup({
      configuration: { prefix: "cfg" },
      request_transform: {
        code: `module.exports = async function (req) {
          const { body, headers, method, path, query } = req.args;
          return {
            body: { seen: { body, method, path, query, auth: headers.authorization }, prefix: req.configuration.prefix },
            headers: { "x-added": "1", "bad header": "dropped", "x_ok": "yes", "content-type": "application/json" },
          };
        };`,
      },
    });
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card_number", data: VISA },
    });

    const res = await api.post("/proxy/pay?x=1", {
      key: user,
      headers: { "svc-proxy-key": proxyKey, authorization: "Bearer t" },
      body: { n: `{{ ${token.body.id} }}` },
    });
    const sent = received.at(-1);

    expect(res.status).toBe(201);
    expect(JSON.parse(String(sent?.body))).toEqual({
      seen: { body: { n: VISA }, method: "POST", path: "/pay", query: "?x=1", auth: "Bearer t" },
      prefix: "cfg",
    });
    expect(sent?.headers["x-added"]).toBe("1");
    expect(sent?.headers.x_ok).toBe("yes");
    expect(sent?.headers["bad header"]).toBeUndefined();
  });

  it("runs the response transform, whose body and headers become the proxy response; svc tokenizes", async () => {
    const { api, user, proxyKey } = await setup({
      response_transform: {
        code: `module.exports = async function (req) {
          const token = await req.svc.tokens.create({ type: "card_number", data: req.args.body.card });
          return { body: { token_id: token.id, status: req.args.body.status }, headers: { "content-type": "application/json", "x-t": "r" } };
        };`,
      },
    });

    const res = await api.get<{ token_id: string; status: string }>("/proxy", {
      key: user,
      headers: { "svc-proxy-key": proxyKey },
    });
    const token = await api.get<TokenBody>(`/tokens/${res.body.token_id}`, { key: user });

    expect(res.status).toBe(201);
    expect(res.headers.get("svc-proxy-destination-status")).toBe("201");
    expect(res.headers.get("x-t")).toBe("r");
    expect(res.headers.get("x-from")).toBeNull();
    expect(res.body.status).toBe("ok");
    expect(JSON.stringify(res.body)).not.toContain("4242424242424242");
    expect(token.body.data).toBe("XXXXXXXXXXXX4242");
  });

  it("gives transforms svc = null when the proxy has no application", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const user = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:use"] });
    const proxy = await api.post<{ key: string }>("/proxies", {
      key: tenant.managementKey,
      body: {
        name: "no app",
        destination_url: destination.url,
        request_transform: {
          code: "module.exports = async (req) => ({ body: { svcIsNull: req.svc === null }, headers: {} });",
        },
      },
    });

    await api.post("/proxy", { key: user, headers: { "svc-proxy-key": proxy.body.key }, body: {} });

    expect(JSON.parse(String(received.at(-1)?.body))).toEqual({ svcIsNull: true });
  });

  it("turns errors thrown by a transform into proxy_error, without sending", async () => {
    const { api, user, proxyKey } = await setup({
      request_transform: { code: "module.exports = async () => { throw new Error('card declined'); };" },
    });
    const before = received.length;

    const res = await api.post<{ proxy_error: { status: number; detail: string; request_id: string } }>(
      "/proxy",
      { key: user, headers: { "svc-proxy-key": proxyKey }, body: { a: 1 } },
    );

    // Generic, with the request id: the transform's message may hold detokenized data (issue 10).
    expect(res.status).toBe(500);
    expect(res.body.proxy_error.detail).not.toContain("card declined");
    expect(res.body.proxy_error.request_id).toEqual(expect.any(String));
    expect(received.length).toBe(before);
  });

  it("refuses payloads over 5 MB when a transform is configured", async () => {
    const { api, user, proxyKey } = await setup({
      request_transform: { code: "module.exports = async (req) => ({ body: req.args.body, headers: {} });" },
    });

    const res = await api.post<{ proxy_error: { status: number } }>("/proxy", {
      key: user,
      headers: { "svc-proxy-key": proxyKey, "content-type": "text/plain" },
      rawBody: "x".repeat(5 * 1024 * 1024 + 10),
    });

    expect(res.status).toBe(413);
    expect(res.body.proxy_error.status).toBe(413);
  });

  it("survives a transform that hangs or exhausts memory: that request fails, the next ones work", async () => {
    const { api, user, proxyKey, managementKey } = await setup({
      request_transform: {
        code: "module.exports = async (req) => { if (req.args.body.hang) { for (;;) {} } return { body: req.args.body, headers: {} }; };",
      },
    });

    const hung = await api.post<{ proxy_error: { status: number } }>("/proxy", {
      key: user,
      headers: { "svc-proxy-key": proxyKey },
      body: { hang: true },
    });
    const fine = await api.post("/proxy", {
      key: user,
      headers: { "svc-proxy-key": proxyKey },
      body: { hang: false },
    });
    const health = await api.get("/healthz");
    const other = await api.get("/applications", { key: managementKey });

    expect(hung.status).toBe(504);
    expect(fine.status).toBe(201);
    expect(health.status).toBe(200);
    expect(other.status).toBe(200);
  });
});

describe("the svc key a transform's run gets in AWS (its calls' rate budget)", () => {
  /** The service sessions the proxy's runs would be handed (issueSvcKey, called as the Lambda sandbox does). */
  async function svcKeysOfRuns(invoke: () => Promise<unknown>) {
    const sandbox = svc.service.deps.sandbox as unknown as { run: (request: unknown) => Promise<unknown> };
    const run = sandbox.run.bind(sandbox);
    const issued: string[] = [];
    sandbox.run = async (request) => {
      const issue = (request as { issueSvcKey?: () => Promise<string> }).issueSvcKey;
      if (issue) issued.push(await issue());
      return run(request);
    };
    try {
      await invoke();
    } finally {
      sandbox.run = run;
    }
    const { authenticator } = svc.service.deps;
    return Promise.all(issued.map((key) => authenticator.authenticate(key, { rootAllowed: false })));
  }
  const transform = { code: "module.exports = async (req) => ({ body: req.args.body, headers: {} });" };

  it("is a service session for a back-end caller, and a browser-budget session for an open proxy's caller", async () => {
    // Review round 6 (suspected): a service session spends its application's budget (the back end's half), so an
    // open proxy's caller, paying one browser-budget request, made the code's svc calls (up to 1,000 a run) spend
    // the back end's half.
    const backend = await setup({ request_transform: transform });
    const fromBackend = await svcKeysOfRuns(() =>
      backend.api.post("/proxy", {
        key: backend.user,
        headers: { "svc-proxy-key": backend.proxyKey },
        body: {},
      }),
    );
    const open = await setup({ request_transform: transform, require_auth: false });
    const fromAnyone = await svcKeysOfRuns(() =>
      open.api.post("/proxy", { headers: { "svc-proxy-key": open.proxyKey }, body: {} }),
    );

    expect(fromBackend).toHaveLength(1);
    expect(fromBackend[0]).toMatchObject({ kind: "session", session: { service: true } });
    expect(fromAnyone).toHaveLength(1);
    expect(fromAnyone[0]).toMatchObject({ kind: "session" });
    expect(fromAnyone[0]).not.toMatchObject({ session: { service: true } });
  });
});
