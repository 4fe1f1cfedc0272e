import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import { METRIC } from "./metric-names.ts";

/** `2xx`…`5xx` for an answer, `error` when none came (refused, timed out, unreachable). */
export const statusClassOf = (status: number | undefined): string =>
  status === undefined || status < 100 || status > 599 ? "error" : `${Math.floor(status / 100)}xx`;

/**
 * Runs one call to a tenant's destination (the proxy's forward) and records its round trip and answer class
 * (dimension `status_class`; the tenant in metadata, never the URL). The outcome, errors included, passes
 * unchanged.
 */
export async function timedDestination<R extends { status: number }>(
  deps: { metrics: Metrics; clock: Clock },
  tenantId: string,
  call: () => Promise<R>,
): Promise<R> {
  const started = deps.clock.now().getTime();
  let status: number | undefined;
  try {
    const response = await call();
    status = response.status;
    return response;
  } finally {
    const options = {
      dimensions: { status_class: statusClassOf(status) },
      metadata: { tenant_id: tenantId },
    };
    deps.metrics.timing(METRIC.proxyDestinationLatency, deps.clock.now().getTime() - started, options);
    deps.metrics.count(METRIC.proxyDestinationResponses, 1, options);
  }
}
