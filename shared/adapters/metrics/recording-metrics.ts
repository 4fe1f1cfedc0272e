import type { MetricName } from "#shared/observability/metric-names.ts";
import type { FlushableMetrics, MetricOptions } from "#shared/ports/metrics.ts";

export interface RecordedMetric extends MetricOptions {
  name: MetricName;
  kind: "count" | "timing";
  value: number;
}

/** Keeps every point in memory (tests): what a request recorded, with its dimensions and metadata. */
export class RecordingMetrics implements FlushableMetrics {
  readonly points: RecordedMetric[] = [];
  flushes = 0;

  count(name: MetricName, value = 1, options: MetricOptions = {}): void {
    this.points.push({ name, kind: "count", value, ...options });
  }

  timing(name: MetricName, ms: number, options: MetricOptions = {}): void {
    this.points.push({ name, kind: "timing", value: ms, ...options });
  }

  flush(): void {
    this.flushes += 1;
  }

  /** The points named `name`. */
  named(name: MetricName): RecordedMetric[] {
    return this.points.filter((point) => point.name === name);
  }

  clear(): void {
    this.points.length = 0;
  }
}
