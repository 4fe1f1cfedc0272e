import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useEnv } from "#test/support/env.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, tenantWithOwner } from "#test/support/tokens.ts";
import { runImport } from "../../scripts/cli/import.ts";

// A low limit for this file's service only: 3 requests per 30 s window.
useEnv({ SVC_RATE_LIMIT_PER_SECOND: "0.1", SVC_RATE_LIMIT_BURST: "3" });
const WINDOW_SECONDS = 30;

const svc = useService();

describe("svc-vault import against a rate-limited service", () => {
  it("waits out each 429's Retry-After (on the service's clock) and imports everything once", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const file = join(mkdtempSync(join(tmpdir(), "svc-import-")), "limited.jsonl");
    writeFileSync(
      file,
      `${Array.from({ length: 8 }, (_, i) => JSON.stringify({ type: "token", data: `v${i}` })).join("\n")}\n`,
    );
    const waits: { ms: number; reason: string }[] = [];
    // The windows (30 s here) are aligned to the epoch: started late in one, the import would see a window end by
    // itself (real time passing) and need one wait fewer. Start it at a window's beginning, on the service's clock.
    const now = await api.post<{ now: string }>("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: 0 },
    });
    const intoWindow = Math.floor(Date.parse(now.body.now) / 1000) % WINDOW_SECONDS;
    await api.post("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: WINDOW_SECONDS - intoWindow },
    });

    const summary = await runImport({
      file,
      url: svc.url,
      key: owner,
      batchSize: 1,
      concurrency: 2,
      progress: { write: () => true, isTTY: false },
      // The injected wait moves the service's test clock by what Retry-After asked, instead of sleeping.
      sleep: async (ms, reason) => {
        waits.push({ ms, reason });
        const moved = await api.post("/_test/clock", {
          key: svc.rootKey,
          body: { advance_seconds: Math.ceil(ms / 1000) },
        });
        expect(moved.status).toBe(200);
      },
    });

    expect(summary).toMatchObject({ records: 8, created: 8, failed: [] });
    expect(waits.length).toBeGreaterThanOrEqual(2);
    for (const wait of waits) {
      expect(wait.reason).toBe("rate-limited");
      expect(wait.ms).toBeGreaterThanOrEqual(1000);
      expect(wait.ms).toBeLessThanOrEqual(30_000);
    }
    // Each token once: a request refused with 429 created nothing, and its retry created it.
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 60 } });
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 60 } });
    const page = await api.get<{ data: { data: string }[] }>("/v2/tokens?size=100", { key: reader });
    expect(page.body.data.map((t) => t.data).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `v${i}`));
  });
});
