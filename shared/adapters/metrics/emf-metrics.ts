import { Metrics as PowertoolsMetrics } from "@aws-lambda-powertools/metrics";
import { METRIC_SERVICE, METRIC_SPEC, type MetricName } from "#shared/observability/metric-names.ts";
import type { FlushableMetrics, MetricOptions } from "#shared/ports/metrics.ts";

interface Point {
  name: MetricName;
  value: number;
  options: MetricOptions;
}

/** Sorted entries as one string: points with the same dimensions and metadata share one EMF document. */
const keyOf = ({ dimensions = {}, metadata = {} }: MetricOptions) =>
  JSON.stringify([Object.entries(dimensions).sort(), Object.entries(metadata).sort()]);

/**
 * CloudWatch metrics as EMF log lines (Powertools Metrics): points are buffered, and `flush` writes one line
 * per dimension set and metadata (EMF applies a document's dimensions to all its metrics, so a route's request
 * metrics and the invocation's token counts are separate lines). The namespace is the one given, else
 * POWERTOOLS_METRICS_NAMESPACE (the construct sets it per deployment), else `svc-vault` (Powertools' own default
 * would warn on every line); every metric carries the dimension `service`.
 */
export class EmfMetrics implements FlushableMetrics {
  private readonly powertools: PowertoolsMetrics;
  private buffer: Point[] = [];

  constructor(options: { namespace?: string } = {}) {
    this.powertools = new PowertoolsMetrics({
      serviceName: METRIC_SERVICE,
      namespace: options.namespace || process.env.POWERTOOLS_METRICS_NAMESPACE || METRIC_SERVICE,
    });
  }

  count(name: MetricName, value = 1, options: MetricOptions = {}): void {
    this.buffer.push({ name, value, options });
  }

  timing(name: MetricName, ms: number, options: MetricOptions = {}): void {
    this.buffer.push({ name, value: Math.max(0, ms), options });
  }

  flush(): void {
    const points = this.buffer;
    this.buffer = [];
    const groups = new Map<string, Point[]>();
    for (const point of points) {
      const key = keyOf(point.options);
      const group = groups.get(key);
      if (group) group.push(point);
      else groups.set(key, [point]);
    }
    for (const group of groups.values()) this.publish(group);
  }

  /**
   * One group's values: counts summed (a batch's 250 detokenized tokens are one value), timings one value each,
   * at most VALUES_PER_LINE of a metric per line. Powertools publishes on its own at 100 values, which would
   * drop the dimensions added here from the rest, so this publishes first.
   */
  private publish(group: Point[]): void {
    const { dimensions = {}, metadata = {} } = group[0]?.options ?? {};
    const counts = new Map<MetricName, number>();
    const timings: Point[] = [];
    for (const point of group) {
      if (METRIC_SPEC[point.name].unit === "Count")
        counts.set(point.name, (counts.get(point.name) ?? 0) + point.value);
      else timings.push(point);
    }
    const values: [MetricName, number][] = [
      ...counts,
      ...timings.map((p): [MetricName, number] => [p.name, p.value]),
    ];
    for (let from = 0; from < values.length; from += VALUES_PER_LINE) {
      for (const [name, value] of defined(dimensions)) this.powertools.addDimension(name, value);
      for (const [name, value] of defined(metadata)) this.powertools.addMetadata(name, value);
      for (const [name, value] of values.slice(from, from + VALUES_PER_LINE))
        this.powertools.addMetric(name, METRIC_SPEC[name].unit, value);
      // Clears the dimensions and metadata for the next line.
      this.powertools.publishStoredMetrics();
    }
  }
}

/** Fewer values per line than Powertools' own limit (100 of one metric, 100 metrics). */
const VALUES_PER_LINE = 90;

const defined = (entries: Record<string, string | undefined>) =>
  Object.entries(entries).filter((entry): entry is [string, string] => entry[1] !== undefined);
