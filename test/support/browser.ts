import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";

/** A headless Chromium for this test file, with a fresh profile (its --user-data-dir); closed after the file. */
export function useBrowser(): { browser: BrowserContext } {
  const holder = {} as { browser: BrowserContext };
  let profile: string | undefined;
  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), "svc-chromium-"));
    // Playwright passes the profile as --user-data-dir itself (it refuses the flag in args).
    holder.browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
    });
  });
  afterAll(async () => {
    await holder.browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });
  return holder;
}

/** A static site on its own origin (127.0.0.1, its own port): path → HTML. */
export interface Site {
  origin: string;
  pages: Map<string, string>;
  server: Server;
}

export function useSite(): Site {
  const site = { pages: new Map<string, string>() } as Site;
  beforeAll(async () => {
    site.server = createServer((req, res) => {
      const page = site.pages.get(new URL(req.url ?? "/", "http://x").pathname);
      if (page === undefined) {
        res.writeHead(404).end();
        return;
      }
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
        .end(page);
    });
    await new Promise<void>((resolve) => site.server.listen(0, "127.0.0.1", resolve));
    site.origin = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    // Idle keep-alive connections from the browser would hold close() open.
    site.server?.closeAllConnections();
    await new Promise((resolve) => site.server?.close(resolve));
  });
  return site;
}

/**
 * A merchant page that loads elements.js from the vault and records, for the test to inspect, every message
 * posted to the page, every change event, and every value the library returned.
 */
export function merchantPage(vaultUrl: string, body = ""): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Checkout</title>
<script src="${vaultUrl}/elements/v1/elements.js"></script></head>
<body><h1>Checkout</h1>${body}
<script>
  window.seen = { messages: [], events: [], results: [] };
  window.addEventListener("message", (e) => { try { window.seen.messages.push(JSON.stringify(e.data)); } catch { window.seen.messages.push(String(e.data)); } });
  window.keep = (value) => { window.seen.results.push(JSON.stringify(value)); return value; };
</script></body></html>`;
}
