/**
 * Attack: a page on an origin the tenant never listed uses a public (or session) key, which is public by design,
 * from a visitor's browser. CORS is answered only on the routes public and session keys call, and an actual
 * request from an unlisted origin is refused (403 problem+json, no Access-Control-Allow-Origin), so the
 * browser neither performs the operation nor lets the page read an answer. Management and root routes never
 * answer CORS at all.
 */
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, revealEverything, VISA } from "#test/support/tokens.ts";

const svc = useService();
const SHOP = "https://shop.example.com";
const EVIL = "https://evil.example.net";

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const browser = await api.post<{ id: string; key: string; allowed_origins: string[] }>("/applications", {
    key: tenant.managementKey,
    body: {
      name: "checkout page",
      type: "public",
      permissions: ["token:create", "token:update"],
      allowed_origins: [SHOP, "http://127.0.0.1:8080"],
    },
  });
  expect(browser.status).toBe(201);
  const backend = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "backend", type: "private", permissions: ALL_TOKEN_PERMISSIONS, rules: revealEverything },
  });
  expect(backend.status).toBe(201);
  return { api, tenant, browser: browser.body, backend: backend.body };
}

const card = { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2040 } };

describe("CORS: allowed_origins", () => {
  it("stores, answers and validates allowed_origins on create, PUT, GET and list", async () => {
    const { api, tenant, browser } = await setup();
    expect(browser.allowed_origins).toEqual([SHOP, "http://127.0.0.1:8080"]);
    const read = await api.get<{ allowed_origins: string[] }>(`/applications/${browser.id}`, {
      key: tenant.managementKey,
    });
    expect(read.body.allowed_origins).toEqual([SHOP, "http://127.0.0.1:8080"]);
    const put = await api.put<{ allowed_origins: string[] }>(`/applications/${browser.id}`, {
      key: tenant.managementKey,
      body: { name: "checkout page", permissions: ["token:create"], allowed_origins: [EVIL] },
    });
    expect(put.status).toBe(200);
    expect(put.body.allowed_origins).toEqual([EVIL]);
    const list = await api.get<{ data: { id: string; allowed_origins: string[] }[] }>("/applications", {
      key: tenant.managementKey,
    });
    expect(list.body.data.find((a) => a.id === browser.id)?.allowed_origins).toEqual([EVIL]);
    // An application listing none still answers the field.
    expect(list.body.data.every((a) => Array.isArray(a.allowed_origins))).toBe(true);

    for (const bad of [
      "*",
      "https://*.example.com",
      "https://shop.example.com/",
      "https://shop.example.com/checkout",
      "https://Shop.example.com",
      "https://shop.example.com:443",
      "ftp://shop.example.com",
      "shop.example.com",
      "https://user:pw@shop.example.com",
      "null",
      // Before: accepted, and written into the frame page's CSP and HTML as is (a report-uri directive, an attribute).
      'http://a"http-equiv="refresh',
      "http://x;report-uri",
      "http://a'b",
      "http://a,b",
    ]) {
      const refused = await api.post("/applications", {
        key: tenant.managementKey,
        body: { name: "x", type: "public", permissions: ["token:create"], allowed_origins: [bad] },
      });
      expect(refused.status, bad).toBe(400);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
    }
  });

  it("answers preflights on the browser routes only, never on management or root routes", async () => {
    const { api } = await setup();
    const preflight = (path: string, method: string) =>
      api.call("OPTIONS", path, {
        headers: {
          origin: EVIL,
          "access-control-request-method": method,
          "access-control-request-headers": "svc-api-key, content-type",
        },
      });
    for (const [path, method] of [
      ["/tokens", "POST"],
      ["/tokens/0190a1b2-0000-7000-8000-000000000000", "GET"],
      ["/tokens/0190a1b2-0000-7000-8000-000000000000", "PATCH"],
      ["/sessions", "POST"],
    ] as const) {
      const res = await preflight(path, method);
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(EVIL);
      expect(res.headers.get("access-control-allow-methods")).toContain(method);
      expect(res.headers.get("access-control-allow-headers")).toContain("svc-api-key");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    }
    // DELETE /tokens/{id} and GET /tokens are not browser routes.
    const item = await preflight("/tokens/0190a1b2-0000-7000-8000-000000000000", "DELETE");
    expect(item.headers.get("access-control-allow-methods")).not.toContain("DELETE");
    for (const [path, method] of [
      ["/applications", "POST"],
      ["/tenants", "POST"],
      ["/sessions/authorize", "POST"],
      ["/logs", "GET"],
      ["/proxies", "POST"],
    ] as const) {
      const res = await preflight(path, method);
      expect(res.status, path).toBe(405);
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
    }
  });

  it("refuses an actual request from an unlisted origin with 403 and no Access-Control-Allow-Origin", async () => {
    const { api, browser, backend } = await setup();
    const before = await api.get<{ pagination: { total_items: number } }>("/tokens", { key: backend.key });

    const refused = await api.post("/tokens", { key: browser.key, body: card, headers: { origin: EVIL } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    // Nothing was created.
    const after = await api.get<{ pagination: { total_items: number } }>("/tokens", { key: backend.key });
    expect(after.body.pagination.total_items).toBe(before.body.pagination.total_items);

    // An opaque origin (sandboxed frame, file://) is unlisted too.
    const opaque = await api.post("/tokens", { key: browser.key, body: card, headers: { origin: "null" } });
    expect(opaque.status).toBe(403);

    // A listed origin is answered, with Access-Control-Allow-Origin for that origin alone.
    const allowed = await api.post<{ id: string }>("/tokens", {
      key: browser.key,
      body: card,
      headers: { origin: SHOP },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(allowed.headers.get("vary")).toContain("Origin");

    // PATCH too: an unlisted origin changes nothing.
    const patched = await api.patch(`/tokens/${allowed.body.id}`, {
      key: browser.key,
      rawBody: JSON.stringify({ metadata: { hijacked: "yes" } }),
      headers: { origin: EVIL, "content-type": "application/merge-patch+json" },
    });
    expect(patched.status).toBe(403);
    const read = await api.get<{ metadata?: Record<string, string> }>(`/tokens/${allowed.body.id}`, {
      key: backend.key,
    });
    expect(read.body.metadata?.hijacked).toBeUndefined();
  });

  it("bounds a session key by the origins of the application that created it, not the one that authorized it", async () => {
    const { api, tenant, browser } = await setup();
    // The authorizing private application lists EVIL; the session's creator (the public app) does not.
    const authorizer = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: {
        name: "authorizer",
        type: "private",
        permissions: ["token:read"],
        rules: revealEverything,
        allowed_origins: [EVIL],
      },
    });
    const owner = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "owner", type: "private", permissions: ALL_TOKEN_PERMISSIONS, rules: revealEverything },
    });
    const token = await api.post<{ id: string }>("/tokens", { key: owner.body.key, body: card });

    const fromEvil = await api.post("/sessions", { key: browser.key, headers: { origin: EVIL } });
    expect(fromEvil.status).toBe(403);
    const session = await api.post<{ session_key: string; nonce: string }>("/sessions", {
      key: browser.key,
      headers: { origin: SHOP },
    });
    expect(session.status).toBe(201);
    expect(session.headers.get("access-control-allow-origin")).toBe(SHOP);
    const authorized = await api.post("/sessions/authorize", {
      key: authorizer.body.key,
      body: {
        nonce: session.body.nonce,
        rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
      },
    });
    expect(authorized.status).toBe(200);

    const stolen = await api.get(`/tokens/${token.body.id}`, {
      key: session.body.session_key,
      headers: { origin: EVIL },
    });
    expect(stolen.status).toBe(403);
    expect(stolen.headers.get("access-control-allow-origin")).toBeNull();
    expect(JSON.stringify(stolen.body)).not.toContain(VISA);
    const shown = await api.get<{ data: { number: string } }>(`/tokens/${token.body.id}`, {
      key: session.body.session_key,
      headers: { origin: SHOP },
    });
    expect(shown.status).toBe(200);
    expect(shown.body.data.number).toBe(VISA);
  });

  it("never answers CORS on management routes, even from a listed origin", async () => {
    const { api, tenant } = await setup();
    const mgmt = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "ops", type: "management", permissions: ["application:read"], allowed_origins: [SHOP] },
    });
    expect(mgmt.status).toBe(201);
    const res = await api.get("/applications", { key: mgmt.body.key, headers: { origin: SHOP } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const tenants = await api.post("/tenants", {
      key: svc.rootKey,
      body: { name: "x" },
      headers: { origin: SHOP },
    });
    expect(tenants.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("takes a change of allowed_origins at once in the process that made it", async () => {
    const { api, tenant, browser } = await setup();
    const ok = await api.post("/tokens", { key: browser.key, body: card, headers: { origin: SHOP } });
    expect(ok.status).toBe(201);
    const put = await api.put(`/applications/${browser.id}`, {
      key: tenant.managementKey,
      body: { name: "checkout page", permissions: ["token:create"], allowed_origins: [] },
    });
    expect(put.status).toBe(200);
    const refused = await api.post("/tokens", { key: browser.key, body: card, headers: { origin: SHOP } });
    expect(refused.status).toBe(403);
  });
});
