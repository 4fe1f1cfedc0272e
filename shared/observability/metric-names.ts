/**
 * The service's own CloudWatch metrics (Powertools Metrics, EMF), one list for the functions that emit them and
 * the CDK dashboard that draws them. Tenant ids never become dimensions (cardinality): they go into metadata.
 * The namespace comes from POWERTOOLS_METRICS_NAMESPACE, set per deployment by the construct.
 */
export const METRIC = {
  /** Every API request, dimension `route` (the route table's id). */
  requests: "Requests",
  /** Answers by class, dimension `route`. */
  responses4xx: "Responses4xx",
  responses5xx: "Responses5xx",
  /** Handler latency in milliseconds, dimension `route`. */
  latency: "Latency",
  tokensCreated: "TokensCreated",
  tokensRead: "TokensRead",
  tokensDetokenized: "TokensDetokenized",
  /** Proxy destination round trip in milliseconds, and its answers, dimension `status_class` (2xx…5xx, error). */
  proxyDestinationLatency: "ProxyDestinationLatency",
  proxyDestinationResponses: "ProxyDestinationResponses",
  /** Sandboxed code (transforms, reactors, formulas): run time in milliseconds and refusals (budget, limits). */
  sandboxRunDuration: "SandboxRunDuration",
  sandboxRefusals: "SandboxRefusals",
  /** Requests refused by a tenant rate limit (429). */
  rateLimitRefusals: "RateLimitRefusals",
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** Dimension names used with the metrics above. */
export const METRIC_DIMENSION = { route: "route", statusClass: "status_class" } as const;
