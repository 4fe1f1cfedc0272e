/**
 * The `elements` scenario: the size of elements.js and frame.js (minified, gzipped) and, in Debian's chromium
 * (playwright-core, as the browser tests), the time from `mount()` to ready: the frame page fetched, its script
 * run and the handshake done. One page on its own origin mounts and unmounts a card element `samples` times;
 * the first mount also fetches frame.js. Not a test: figures for docs/performance.md.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { buildElements } from "#shared/elements/build.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../test/support/chromium.ts";

export const BUNDLE_GZIP_TARGET_BYTES = 30 * 1024;
export const MOUNT_READY_TARGET_MS = 150;

export interface ElementsFigures {
  elements_js_bytes: number;
  elements_js_gzip_bytes: number;
  frame_js_gzip_bytes: number;
  init_ms?: number;
  mount_ready_first_ms?: number;
  mount_ready_p50_ms?: number;
  mount_ready_max_ms?: number;
  samples?: number;
  skipped?: string;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function measureElements(options: {
  serviceUrl: string;
  rootKey: string;
  samples: number;
  log: (line: string) => void;
}): Promise<ElementsFigures> {
  const bundle = await buildElements();
  const sizes = {
    elements_js_bytes: Buffer.byteLength(bundle["elements.js"]),
    elements_js_gzip_bytes: gzipSync(bundle["elements.js"]).length,
    frame_js_gzip_bytes: gzipSync(bundle["frame.js"]).length,
  };
  if (!existsSync(CHROMIUM_PATH)) return { ...sizes, skipped: `no browser at ${CHROMIUM_PATH}` };
  const { chromium } = await import("playwright-core");
  const page = createServer((_, res) =>
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(
        `<!doctype html><script src="${options.serviceUrl}/elements/v1/elements.js"></script><div id="card"></div>`,
      ),
  );
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  const post = async (path: string, key: string, body: unknown) =>
    (await (
      await fetch(`${options.serviceUrl}${path}`, {
        method: "POST",
        headers: { "svc-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as Record<string, string>;
  const tenant = await post("/tenants", options.rootKey, { name: "elements bench" });
  const app = await post("/applications", tenant.management_key as string, {
    name: "page",
    type: "public",
    permissions: ["token:create"],
    allowed_origins: [origin],
  });
  const profile = mkdtempSync(join(tmpdir(), "svc-bench-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  try {
    const tab = await browser.newPage();
    await tab.goto(origin);
    options.log(`mounting a card element ${options.samples} times in chromium…`);
    const figures = (await tab.evaluate(`(async () => {
      const started = performance.now();
      const svc = await SvcElements.init({ apiKey: ${JSON.stringify(app.key)}, baseUrl: ${JSON.stringify(options.serviceUrl)} });
      const init = performance.now() - started;
      const mounts = [];
      for (let i = 0; i < ${options.samples}; i++) {
        const card = svc.createElement("card");
        const t0 = performance.now();
        await card.mount("#card");
        mounts.push(performance.now() - t0);
        card.unmount();
      }
      return { init, mounts };
    })()`)) as { init: number; mounts: number[] };
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return {
      ...sizes,
      init_ms: round(figures.init),
      mount_ready_first_ms: round(figures.mounts[0] ?? 0),
      mount_ready_p50_ms: round(median(figures.mounts)),
      mount_ready_max_ms: round(Math.max(...figures.mounts)),
      samples: figures.mounts.length,
    };
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
    page.closeAllConnections();
    page.close();
  }
}

export function describeElements(f: ElementsFigures): string {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const size = `elements.js ${kb(f.elements_js_bytes)} (${kb(f.elements_js_gzip_bytes)} gzipped; target ≤ ${kb(BUNDLE_GZIP_TARGET_BYTES)}: ${
    f.elements_js_gzip_bytes <= BUNDLE_GZIP_TARGET_BYTES ? "PASS" : "FAIL"
  }), frame.js ${kb(f.frame_js_gzip_bytes)} gzipped`;
  if (f.skipped) return `elements: ${size}; mount → ready not measured (${f.skipped})`;
  const pass = (f.mount_ready_p50_ms ?? Infinity) <= MOUNT_READY_TARGET_MS ? "PASS" : "FAIL";
  return (
    `elements: ${size}\n` +
    `elements: init (controller frame) ${f.init_ms} ms; mount → ready p50 ${f.mount_ready_p50_ms} ms ` +
    `(first ${f.mount_ready_first_ms} ms, max ${f.mount_ready_max_ms} ms, ${f.samples} mounts; target ≤ ${MOUNT_READY_TARGET_MS} ms: ${pass})`
  );
}
