/**
 * Attack: enumerating a low-entropy search index (10,000 last-4 values) at the tenant's full request rate.
 * Search draws from its own budget, a tenth of the tenant's, besides the tenant's: once spent, searches answer
 * 429 while the tenant's other requests still pass.
 */
import { describe, expect, it } from "vitest";
import { windowLengthMs } from "#shared/domain/rate-limit.ts";
import { useEnv } from "#test/support/env.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything } from "#test/support/tokens.ts";

// This file's service only: 30 requests per 300 s window; search then gets 3 per 300 s window.
useEnv({ SVC_RATE_LIMIT_PER_SECOND: "0.1", SVC_RATE_LIMIT_BURST: "30" });

const svc = useService();
const WINDOW_MS = windowLengthMs({ ratePerSecond: 0.01, burst: 3 });

describe("attack: enumerating a search index at the tenant's request rate", () => {
  it("spends search's own, smaller budget: 429 with Retry-After for searches, other requests still served", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Enumerator");
    const key = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    // Just past the start of a window (the service clock), so every request below falls in one.
    const now = svc.service.deps.clock.now().getTime();
    const advance = Math.ceil((WINDOW_MS - (now % WINDOW_MS)) / 1000);
    expect(
      (await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: advance } })).status,
    ).toBe(200);

    const search = (last4: string) =>
      api.post("/v2/tokens/search", { key, body: { query: `data:${last4}` } });
    for (const guess of ["0000", "0001", "0002"]) expect((await search(guess)).status).toBe(200);
    const refused = await search("0003");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({ status: 429 });
    // The tenant's own budget is not spent: its other requests pass.
    expect((await api.get("/v2/tokens", { key })).status).toBe(200);
  });
});
