/**
 * Attack (front-end review, 28 Nov 2026): docs/elements.md has merchants allow the vault's origin in their page's CSP
 * for elements.js, and the vault's origin also serves whatever an open proxy's destination answers, with its
 * Content-Type: `GET /proxy/x.js?svc-proxy-key=<key>` handed out a tenant's JavaScript from the vault's origin, and
 * an HTML injection on a checkout page, which that CSP would otherwise stop, ran it (`CSP: sandbox` on the answer
 * does not apply to a script another document loads). Every answer is now `Cross-Origin-Resource-Policy:
 * same-origin` (elements.js excepted), and a destination's own CORP is dropped.
 */
import { describe, expect, it } from "vitest";
import { useBrowser, useSite } from "#test/support/browser.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { openProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });
const chrome = useBrowser();
const shop = useSite();

/** The attacker's proxy destination: a script for any path, which would also let anyone load it. */
const destination = useLocalServer((req, res) => {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  res
    .writeHead(200, { "content-type": "text/javascript", "cross-origin-resource-policy": "cross-origin" })
    .end(`(window.injected ??= []).push(${JSON.stringify(path)});`);
});

describe("attack: the vault's origin serving a tenant's JavaScript to a page that trusts it", () => {
  it("runs no script loaded through a proxy on a page whose CSP allows the vault (elements.js still loads)", async () => {
    const proxyKey = await openProxy(svc.url, svc.rootKey, destination.url);
    const gadget = `${svc.url}/proxy/app.js?svc-proxy-key=${encodeURIComponent(proxyKey)}`;
    const answer = await fetch(gadget);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("cross-origin-resource-policy")).toBe("same-origin");

    // A checkout page with the CSP docs/elements.md recommends, and an injection (a reflected order note).
    const csp = `script-src 'self' ${svc.url}; frame-src ${svc.url}; connect-src 'self'`;
    shop.pages.set(
      "/checkout",
      `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">
<script src="${svc.url}/elements/v1/elements.js"></script></head><body><h1>Checkout</h1>
<p>Order note: <script src="${destination.url}/direct.js"></script><script src="${gadget}"></script></p></body></html>`,
    );
    const page = await chrome.browser.newPage();
    try {
      await page.goto(`${shop.origin}/checkout`); // resolves at `load`: after every blocking script ran or failed
      expect(await page.evaluate("typeof SvcElements")).toBe("object");
      // The attacker's own server is refused by the page's CSP; the same script through the vault is too.
      expect(await page.evaluate("window.injected")).toBeUndefined();
    } finally {
      await page.close();
    }
  });
});
