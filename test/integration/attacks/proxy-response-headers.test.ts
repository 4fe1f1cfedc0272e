/**
 * Attack: a proxy's answer is served from the vault's own origin. A destination (or a tenant who controls
 * one) answering text/html with a script, or a type a browser may sniff into HTML, would have that script
 * run in the vault's origin: stored XSS against anyone who opens a /proxy URL (require_auth: false proxies are
 * links anyone can open). Every /proxy answer carries `X-Content-Type-Options: nosniff` and
 * `Content-Security-Policy: sandbox`, replacing the destination's own values for those headers.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openProxy as openSharedProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });
const SCRIPT = "<html><body><script>fetch('/tokens').then(r=>r.text()).then(alert)</script></body></html>";

let destination: Server;
let destinationUrl: string;

beforeAll(async () => {
  destination = createServer((req, res) => {
    if (req.url?.startsWith("/weakened")) {
      // The destination tries to switch the protections off with its own values.
      res.writeHead(200, {
        "content-type": "text/html",
        "X-Content-Type-Options": "none",
        "Content-Security-Policy": "default-src * 'unsafe-inline' 'unsafe-eval'",
      });
    } else if (req.url?.startsWith("/untyped")) {
      res.writeHead(200, {}); // no content type: a browser would sniff the HTML
    } else {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    }
    res.end(SCRIPT);
  });
  await new Promise<void>((resolve) => destination.listen(0, "127.0.0.1", resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
});

afterAll(() => {
  destination.close();
});

/** An open (require_auth: false) proxy to the destination: its URL is a link anyone can be sent. */
const openProxy = () => openSharedProxy(svc.url, svc.rootKey, destinationUrl);

describe("/proxy answers cannot run script in the vault's origin", () => {
  it.each([
    ["text/html with a script", "/page"],
    ["text/html, with the destination's own weaker X-Content-Type-Options and CSP", "/weakened"],
    ["no content type (sniffable)", "/untyped"],
  ])("%s: nosniff and CSP sandbox, once each", async (_, path) => {
    const key = await openProxy();

    const res = await fetch(`${svc.url}/proxy${path}?svc-proxy-key=${encodeURIComponent(key)}`);

    expect(res.status).toBe(200);
    expect(await res.text()).toBe(SCRIPT); // the bytes pass unchanged; the headers make them inert
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
  });

  it("error answers of the proxy carry them too", async () => {
    const res = await fetch(`${svc.url}/proxy/page?svc-proxy-key=key_proxy_unknown`);

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it.each([
    ["a key refused before any handler runs", "/proxy/page", { "svc-api-key": "key_pvt_unknown" }],
    ["an API route without a key", "/tokens", {}],
    ["a path no route serves", "/nowhere", {}],
  ])("every answer of the API carries them: %s", async (_, path, headers) => {
    const res = await fetch(`${svc.url}${path}`, { headers });

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
  });
});
