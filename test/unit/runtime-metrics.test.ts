import { describe, expect, it } from "vitest";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import { addressBucket, RateLimiter, tenantBucket } from "#shared/domain/rate-limit.ts";
import { MeteredSandbox } from "#shared/observability/metered-sandbox.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RequestBudget } from "#shared/ports/request-budget.ts";
import type { Sandbox, SandboxResult } from "#shared/ports/sandbox.ts";

/** The metrics of the limiter and the sandbox, with the recording adapter and a clock the test moves. */
const TENANT = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

function steppingClock(stepMs: number): Clock {
  let ms = 0;
  return {
    now: () => {
      ms += stepMs;
      return new Date(ms);
    },
  };
}

describe("rate-limit refusals", () => {
  it("counts each refusal once, the tenant in metadata (none for an address bucket)", async () => {
    const metrics = new RecordingMetrics();
    // A spent budget: every lease is refused.
    const spent: RequestBudget = { lease: async () => 0 };
    const limiter = new RateLimiter(
      spent,
      { now: () => new Date(0) },
      { ratePerSecond: 1, burst: 1 },
      { metrics },
    );

    await limiter.admit(tenantBucket(TENANT));
    await limiter.admit(`${tenantBucket(TENANT)}#search`);
    await limiter.admit(addressBucket("203.0.113.9"));

    expect(metrics.named("RateLimitRefusals")).toEqual([
      { name: "RateLimitRefusals", kind: "count", value: 1, metadata: { tenant_id: TENANT } },
      { name: "RateLimitRefusals", kind: "count", value: 1, metadata: { tenant_id: TENANT } },
      { name: "RateLimitRefusals", kind: "count", value: 1 },
    ]);
  });
});

describe("sandbox runs", () => {
  const sandboxAnswering = (result: SandboxResult): Sandbox => ({
    run: async () => result,
    close: async () => undefined,
  });
  const run = (sandbox: Sandbox) =>
    sandbox.run({ tenantId: TENANT, code: "module.exports = () => 1", input: {}, timeoutMs: 1000 });

  it("times every run on the clock port and counts the runs a limit stopped as refusals", async () => {
    const metrics = new RecordingMetrics();
    const outcomes: SandboxResult[] = [
      { ok: true, value: 1 },
      { ok: false, error: { kind: "timeout", message: "stopped" } },
      { ok: false, error: { kind: "memory", message: "stopped" } },
      { ok: false, error: { kind: "thrown", message: "the code's own error" } },
    ];
    for (const outcome of outcomes)
      await run(new MeteredSandbox(sandboxAnswering(outcome), { metrics, clock: steppingClock(5) }));

    expect(metrics.named("SandboxRunDuration").map((p) => p.value)).toEqual([5, 5, 5, 5]);
    expect(metrics.named("SandboxRefusals")).toHaveLength(2);
    for (const point of metrics.points) {
      expect(point.metadata).toEqual({ tenant_id: TENANT });
      expect(point.dimensions).toBeUndefined();
    }
  });

  it("passes prepare and close through to the sandbox it measures", async () => {
    const prepared: string[] = [];
    const inner: Sandbox = {
      ...sandboxAnswering({ ok: true, value: 1 }),
      prepare: async (t) => void prepared.push(t),
    };
    const metered = new MeteredSandbox(inner, { metrics: new RecordingMetrics(), clock: steppingClock(1) });
    await metered.prepare("t-1");
    expect(prepared).toEqual(["t-1"]);
  });
});
