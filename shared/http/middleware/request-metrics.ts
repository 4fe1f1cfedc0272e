import { tenantOfBucket } from "#shared/domain/rate-limit.ts";
import { logger } from "#shared/logger.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { MetricMetadata, Metrics } from "#shared/ports/metrics.ts";
import type { SvcMiddleware, SvcRequest } from "../request-state.ts";

export interface RequestMetricsPorts {
  metrics: Metrics;
  clock: Clock;
}

/** The dimension of a request that matched no route: never its path (it may hold token ids; cardinality). */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Every request's metrics, answered or failed, whatever the route: Requests, Responses4xx/5xx and Latency by
 * `route` (the route table's id). The tenant (a key's, or a proxy invocation's) goes into metadata only.
 * A metric never fails a request: recording errors are logged and dropped.
 */
export function requestMetrics(ports: () => RequestMetricsPorts): SvcMiddleware {
  const record = (request: SvcRequest) => {
    const state = request.context.svc;
    const status = request.response?.statusCode;
    if (!state || status === undefined) return;
    try {
      const { metrics, clock } = ports();
      const principal = state.principal;
      const tenantId =
        principal && principal.kind !== "root" ? principal.tenantId : tenantOfBucket(state.bucket);
      // Built key by key, not by spreading a literal (every request passes here).
      const metadata: MetricMetadata = { request_id: state.requestId };
      if (tenantId) metadata.tenant_id = tenantId;
      const options = { dimensions: { route: state.route?.operationId ?? UNMATCHED_ROUTE }, metadata };
      metrics.count(METRIC.requests, 1, options);
      if (status >= 400 && status < 500) metrics.count(METRIC.responses4xx, 1, options);
      if (status >= 500) metrics.count(METRIC.responses5xx, 1, options);
      const started = state.clockStartedAt;
      if (started !== undefined) metrics.timing(METRIC.latency, clock.now().getTime() - started, options);
    } catch (error) {
      logger.warn("request metrics failed", { error_name: error instanceof Error ? error.name : "unknown" });
    }
  };
  return {
    before: (request) => {
      try {
        request.context.svc.clockStartedAt = ports().clock.now().getTime();
      } catch {
        // Composition failed: the chain answers that error; the request is still counted, without a latency.
      }
    },
    after: record,
    onError: record,
  };
}
