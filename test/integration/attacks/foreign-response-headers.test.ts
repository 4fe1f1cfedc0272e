/**
 * Attack: headers a destination or a formula chooses reach the caller from the vault's own origin. A
 * destination's `Set-Cookie` (or a reactor's CustomHttpResponseError `headers`) would set a cookie for the
 * vault's origin in the caller's browser, and hop-by-hop headers (Connection, Keep-Alive, Proxy-*, TE,
 * Trailer, Transfer-Encoding, Upgrade, and any header the Connection header names) would steer the connection
 * between the caller and the vault. One filter (shared/domain/proxies/headers.ts responseHeaders) drops them from every
 * answer built from someone else's headers; end-to-end headers still pass.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openProxy } from "#test/support/proxies.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });

/** Headers a hostile destination (or formula) answers with: what must not cross, then what must. */
const HOSTILE = {
  "set-cookie": "session=attacker; Path=/; HttpOnly",
  "set-cookie2": "legacy=attacker",
  "proxy-authenticate": "Basic realm=x",
  "proxy-authorization": "Basic eDp5",
  "proxy-anything": "1",
  "keep-alive": "timeout=600",
  te: "trailers",
  trailer: "x-late",
  upgrade: "websocket",
  "x-hop": "named in Connection",
  // Which origins may read the vault's answers is the vault's CORS policy, not a destination's.
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "x-partner-id",
};
const KEPT = { "x-partner-id": "p-42", "cache-control": "no-store" };
const DROPPED = Object.keys(HOSTILE);

let destination: Server;
let destinationUrl: string;

beforeAll(async () => {
  destination = createServer((req, res) => {
    // Two cookies, as a real destination sends them (one header line each).
    res.setHeader("set-cookie", ["session=attacker; Path=/; HttpOnly", "csrf=attacker; Path=/"]);
    for (const [name, value] of Object.entries({ ...HOSTILE, ...KEPT }))
      if (name !== "set-cookie") res.setHeader(name, value);
    res.setHeader("connection", "keep-alive, x-hop");
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
});

afterAll(() => {
  destination.close();
});

function expectFiltered(headers: Headers): void {
  for (const name of DROPPED.filter((n) => n !== "keep-alive")) expect(headers.get(name), name).toBeNull();
  // The vault's own server sends its own Keep-Alive and Connection: the hostile values never replace them.
  expect(headers.get("keep-alive") ?? "").not.toContain("600");
  expect(headers.get("connection") ?? "").not.toContain("x-hop");
  expect(headers.getSetCookie()).toEqual([]);
  for (const [name, value] of Object.entries(KEPT)) expect(headers.get(name), name).toBe(value);
}

describe("a destination's headers through a proxy", () => {
  it("drop Set-Cookie and hop-by-hop headers; end-to-end headers pass", async () => {
    const key = await openProxy(svc.url, svc.rootKey, destinationUrl);

    const res = await fetch(`${svc.url}/proxy/page?svc-proxy-key=${encodeURIComponent(key)}`);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: "/page" });
    expectFiltered(res.headers);
  });

  it("the same through a response transform that copies them, or sets its own", async () => {
    const key = await openProxy(svc.url, svc.rootKey, destinationUrl, {
      response_transform: {
        code: `module.exports = async (req) => ({
          body: req.args.body,
          headers: { ...req.args.headers, ...${JSON.stringify({ ...HOSTILE, ...KEPT })}, connection: "x-hop" },
        });`,
      },
    });

    const res = await fetch(`${svc.url}/proxy/page?svc-proxy-key=${encodeURIComponent(key)}`);

    expect(res.status).toBe(200);
    expectFiltered(res.headers);
  });
});

describe("a reactor's CustomHttpResponseError headers", () => {
  it("are answered through the same filter", async () => {
    const { api, app, reactorId } = await createReactor(svc, {
      formula: {
        name: "custom",
        code: `module.exports = async () => {
          throw new CustomHttpResponseError({
            status: 402,
            headers: { ...${JSON.stringify({ ...HOSTILE, ...KEPT })}, connection: "x-hop", "svc-proxy-destination-status": "200" },
            body: { declined: true },
          });
        };`,
      },
      permissions: ["token:use"],
    });

    const res = await api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args: {} } });

    expect(res.status).toBe(402);
    expect(res.body).toEqual({ declined: true });
    expectFiltered(res.headers);
    expect(res.headers.get("svc-proxy-destination-status")).toBeNull();
  });

  it("cannot replace the vault's own protections", async () => {
    const { api, app, reactorId } = await createReactor(svc, {
      formula: {
        name: "weaken",
        code: `module.exports = async () => {
          throw new CustomHttpResponseError({
            status: 200,
            headers: { "Content-Security-Policy": "default-src *", "X-Content-Type-Options": "none" },
            body: { ok: true },
          });
        };`,
      },
      permissions: ["token:use"],
    });

    const res = await api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args: {} } });

    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
