import type { Metrics } from "#shared/ports/metrics.ts";
import type { METRIC } from "./metric-names.ts";

type TokenCount = typeof METRIC.tokensCreated | typeof METRIC.tokensRead | typeof METRIC.tokensDetokenized;

/** Counts `n` tokens a use case created, read or detokenized for `tenantId` (metadata, never a dimension). */
export function countTokens(deps: { metrics: Metrics }, name: TokenCount, tenantId: string, n = 1): void {
  if (n > 0) deps.metrics.count(name, n, { metadata: { tenant_id: tenantId } });
}
