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

/** Each metric's unit and the one dimension set it is emitted with (besides `service`). */
export const METRIC_SPEC: Record<
  MetricName,
  { unit: MetricUnitName; dimensions: readonly MetricDimensionName[]; description: string }
> = {
  Requests: { unit: "Count", dimensions: ["route"], description: "API requests answered" },
  Responses4xx: { unit: "Count", dimensions: ["route"], description: "answers 400–499 (429 included)" },
  Responses5xx: {
    unit: "Count",
    dimensions: ["route"],
    description: "answers 500–599 (503 outages included)",
  },
  Latency: {
    unit: "Milliseconds",
    dimensions: ["route"],
    description: "request time through the whole chain",
  },
  TokensCreated: {
    unit: "Count",
    dimensions: [],
    description:
      "tokens created (batch: each token, counted by the sweep when it finishes a batch whose request died; in a transaction: when it commits, none if it rolls back)",
  },
  TokensRead: {
    unit: "Count",
    dimensions: [],
    description: "tokens read (get, list, search: each token shown)",
  },
  TokensDetokenized: {
    unit: "Count",
    dimensions: [],
    description: "tokens a detokenization used (proxies, reactors, POST /detokenize)",
  },
  ProxyDestinationLatency: {
    unit: "Milliseconds",
    dimensions: ["status_class"],
    description: "a proxy destination's round trip",
  },
  ProxyDestinationResponses: {
    unit: "Count",
    dimensions: ["status_class"],
    description: "proxy destination answers: 2xx…5xx, or `error` (none: refused, timeout, unreachable)",
  },
  SandboxRunDuration: { unit: "Milliseconds", dimensions: [], description: "one run of tenant code" },
  SandboxRefusals: {
    unit: "Count",
    dimensions: [],
    description: "runs of tenant code stopped by a limit (time, memory, size)",
  },
  RateLimitRefusals: {
    unit: "Count",
    dimensions: [],
    description: "requests refused 429 by a rate limit (request or search budget)",
  },
  CallbackRecords: {
    unit: "Count",
    dimensions: ["outcome"],
    description: "callback queue records: `delivered`, `retry` (back to the queue), `dead_letter`",
  },
  SweepRuns: { unit: "Count", dimensions: [], description: "sweep runs (each 15 minutes in AWS)" },
  SweepTokensDeleted: {
    unit: "Count",
    dimensions: [],
    description: "tokens a sweep deleted at their expiry",
  },
};
