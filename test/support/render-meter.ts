import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { RenderScheduler } from "#shared/domain/tokens/render-budget.ts";

/**
 * An expression engine whose every metered render spends the request's whole budget (50 ms), and the count of its
 * meter readings: a render read directly, uncharged, leaves the count at 0.
 */
export function meterCountingEngine() {
  const reads = { count: 0 };
  const scheduler = new RenderScheduler(
    { requestMs: 50, renderMs: 20, tenantMsPerSecond: 1, tenantBurstMs: 1 },
    { now: () => new Date(0) },
    () => {
      reads.count += 1;
      return reads.count * 100;
    },
  );
  return { engine: createExpressionEngine({}, { scheduler }), reads };
}
