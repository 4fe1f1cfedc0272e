/**
 * Attack: embed the vault's card fields in a page the tenant never listed (to phish cardholders with the
 * merchant's real fields, or to clickjack them). The frame page is served with a CSP whose frame-ancestors are
 * the key's application's allowed_origins; a private key (never meant for a browser), an unknown key or no key
 * gets frame-ancestors 'none'. The page runs only the vault's own script and connects only to the API.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();
const SHOP = "https://shop.example.com";
const sha256 = (key: string) => createHash("sha256").update(key).digest("hex");

async function setup() {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const app = (type: string, permissions: string[]) =>
    api.post<{ id: string; key: string }>("/applications", {
      key: managementKey,
      body: { name: type, type, permissions, allowed_origins: [SHOP, "http://127.0.0.1:8080"] },
    });
  const pub = await app("public", ["token:create"]);
  const pvt = await app("private", ["token:read"]);
  return { api, managementKey, pub: pub.body, pvt: pvt.body };
}

const frame = (k?: string) => fetch(`${svc.url}/elements/v1/frame.html${k ? `?k=${k}` : ""}`);
const ancestors = (res: Response) =>
  /frame-ancestors ([^;]+)/.exec(res.headers.get("content-security-policy") ?? "")?.[1];

describe("Elements frame page", () => {
  it("may be embedded only by the public key's application's allowed_origins, under a strict CSP", async () => {
    const { pub } = await setup();
    const res = await frame(sha256(pub.key));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(ancestors(res)).toBe(`${SHOP} http://127.0.0.1:8080`);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("sandbox");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain('<script src="frame.js" defer></script>');
    expect(html).not.toContain(pub.key);
  });

  it("lets no page embed it for a private key, an unknown key or no key", async () => {
    const { pvt } = await setup();
    for (const k of [sha256(pvt.key), sha256("key_pub_not-a-real-key-at-all-000000"), undefined]) {
      const res = await frame(k);
      expect(res.status).toBe(200);
      expect(ancestors(res)).toBe("'none'");
    }
    // A key hash that is not one is refused before any lookup.
    expect((await frame("../../etc")).status).toBe(400);
  });

  it("follows a change of allowed_origins at once, and the API keeps its own sandbox policy", async () => {
    const { api, managementKey, pub } = await setup();
    await api.put(`/applications/${pub.id}`, {
      key: managementKey,
      body: { name: "public", permissions: ["token:create"], allowed_origins: [] },
    });
    expect(ancestors(await frame(sha256(pub.key)))).toBe("'none'");
    const health = await fetch(`${svc.url}/healthz`);
    expect(health.headers.get("content-security-policy")).toBe("sandbox");
  });

  it("serves elements.js and frame.js as cacheable JavaScript, elements.js loadable with SRI", async () => {
    const lib = await fetch(`${svc.url}/elements/v1/elements.js`);
    expect(lib.status).toBe(200);
    expect(lib.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(lib.headers.get("cache-control")).toBe("public, max-age=300");
    expect(lib.headers.get("access-control-allow-origin")).toBe("*");
    expect(await lib.text()).toContain("SvcElements");
    const runtime = await fetch(`${svc.url}/elements/v1/frame.js`);
    expect(runtime.status).toBe(200);
    expect(runtime.headers.get("access-control-allow-origin")).toBeNull();
  });
});
