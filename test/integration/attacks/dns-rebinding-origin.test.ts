/**
 * Finding (front-end review): the API takes a request whose Origin equals `<scheme>://<Host>` for a call from its
 * own origin (the Elements frame) and skips the allowed_origins check for it (middleware/cors.ts crossOrigin). A
 * page on http://rebind.evil:<port>, whose DNS name is re-pointed at the vault's address (DNS rebinding; in local
 * mode 127.0.0.1, reached from the visitor's own browser), sends exactly that: Origin and Host both
 * rebind.evil:<port>. Its calls with a merchant's public key then pass although the tenant never listed the
 * origin. The local gateway answered every Host; API Gateway answers only its own domain names.
 * Node's fetch does not let a caller set Host, so the browser's request is played with node:http.
 */
import http from "node:http";
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { VISA } from "#test/support/tokens.ts";

const svc = useService();

function post(path: string, headers: Record<string, string>, body: unknown) {
  const url = new URL(svc.url);
  return new Promise<{ status: number; allowOrigin: unknown }>((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: "POST", headers }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, allowOrigin: res.headers["access-control-allow-origin"] });
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("DNS rebinding: a page whose name points at the vault is not the vault's own origin", () => {
  it("refuses a request whose Host is a name other than the vault's, instead of skipping the origin check", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const pub = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: {
        name: "checkout page",
        type: "public",
        permissions: ["token:create"],
        allowed_origins: ["https://shop.example.com"],
      },
    });
    const port = new URL(svc.url).port;
    const card = { type: "card_number", data: VISA };
    const common = { "svc-api-key": pub.body.key, "content-type": "application/json" };

    // The unlisted origin, as an ordinary cross-origin page: refused.
    const crossSite = await post(
      "/tokens",
      { ...common, host: `127.0.0.1:${port}`, origin: `http://rebind.evil:${port}` },
      card,
    );
    expect(crossSite.status).toBe(403);

    // The same page after its name was re-pointed at the vault: Origin and Host agree.
    const rebound = await post(
      "/tokens",
      { ...common, host: `rebind.evil:${port}`, origin: `http://rebind.evil:${port}` },
      card,
    );
    expect(rebound.status).not.toBe(201);
    expect([403, 421]).toContain(rebound.status);

    // The vault's own names still answer.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const own = await post("/tokens", { ...common, host }, card);
      expect(own.status, host).toBe(201);
    }
  });
});
