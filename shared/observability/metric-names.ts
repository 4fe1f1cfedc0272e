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
  /** Callback queue records handled, dimension `outcome` (delivered, retry, dead_letter). */
  callbackRecords: "CallbackRecords",
  /** Sweep runs, and the tokens each deleted at expiry. */
  sweepRuns: "SweepRuns",
  sweepTokensDeleted: "SweepTokensDeleted",
  /** Due items a sweep run could not process and put off (each is retried later, backing off to 12 hours). */
  sweepItemsPutOff: "SweepItemsPutOff",
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** Dimension names used with the metrics above. */
export const METRIC_DIMENSION = { route: "route", statusClass: "status_class", outcome: "outcome" } as const;

export type MetricDimensionName = (typeof METRIC_DIMENSION)[keyof typeof METRIC_DIMENSION];

/**
 * Every metric also carries the dimension `service` with this value (Powertools' default dimension), so a
 * dashboard or alarm names a metric by namespace, `service` and the dimensions of METRIC_SPEC.
 */
export const METRIC_SERVICE = "svc-vault";

export type MetricUnitName = "Count" | "Milliseconds";

/**
 * Each metric's unit and the one dimension set it is emitted with (besides `service`). What each counts or
 * times is documentation (metric-docs.ts): no function bundles it.
 */
export const METRIC_SPEC: Record<
  MetricName,
  { unit: MetricUnitName; dimensions: readonly MetricDimensionName[] }
> = {
  Requests: { unit: "Count", dimensions: ["route"] },
  Responses4xx: { unit: "Count", dimensions: ["route"] },
  Responses5xx: { unit: "Count", dimensions: ["route"] },
  Latency: { unit: "Milliseconds", dimensions: ["route"] },
  TokensCreated: { unit: "Count", dimensions: [] },
  TokensRead: { unit: "Count", dimensions: [] },
  TokensDetokenized: { unit: "Count", dimensions: [] },
  ProxyDestinationLatency: { unit: "Milliseconds", dimensions: ["status_class"] },
  ProxyDestinationResponses: { unit: "Count", dimensions: ["status_class"] },
  SandboxRunDuration: { unit: "Milliseconds", dimensions: [] },
  SandboxRefusals: { unit: "Count", dimensions: [] },
  RateLimitRefusals: { unit: "Count", dimensions: [] },
  CallbackRecords: { unit: "Count", dimensions: ["outcome"] },
  SweepRuns: { unit: "Count", dimensions: [] },
  SweepTokensDeleted: { unit: "Count", dimensions: [] },
  SweepItemsPutOff: { unit: "Count", dimensions: [] },
};
