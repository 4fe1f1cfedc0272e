import type { MetricDimensionName, MetricName } from "#shared/observability/metric-names.ts";

/** A metric's dimensions: only the names of metric-names.ts, whose values are few (route ids, classes). */
export type MetricDimensions = Partial<Record<MetricDimensionName, string>>;

/**
 * What may go into a metric's metadata (searchable in the log line, never a dimension): identifiers only,
 * never token data, keys or secrets. The keys are closed so nothing else can be put there.
 */
export type MetricMetadata = Partial<Record<"tenant_id" | "request_id", string>>;

export interface MetricOptions {
  dimensions?: MetricDimensions;
  metadata?: MetricMetadata;
}

/**
 * The service's own metrics (names, units and dimensions in shared/observability/metric-names.ts). Recording
 * never throws and never waits: adapters buffer, and the function's wrapper flushes once per invocation.
 */
export interface Metrics {
  /** Adds `value` (default 1) to a count. */
  count(name: MetricName, value?: number, options?: MetricOptions): void;
  /** Records one duration in milliseconds. */
  timing(name: MetricName, ms: number, options?: MetricOptions): void;
}

/** An adapter whose buffered points are written once per invocation (shared/observability/metrics.ts). */
export interface FlushableMetrics extends Metrics {
  flush(): void;
}
