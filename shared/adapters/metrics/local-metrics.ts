import type { Logger } from "@aws-lambda-powertools/logger";
import type { MetricName } from "#shared/observability/metric-names.ts";
import type { FlushableMetrics, MetricOptions } from "#shared/ports/metrics.ts";

/**
 * Local mode's metrics: no EMF on stdout (a terminal full of JSON documents helps nobody). At log level DEBUG
 * each invocation's points are one readable line; otherwise they are dropped as they come.
 */
export class LocalMetrics implements FlushableMetrics {
  private buffer: string[] = [];
  /**
   * Whether points are kept: the logger's level, read once per invocation (at each flush) rather than on every
   * point (Powertools resolves the level's name on each call: a few µs, three or more times a request).
   */
  private debugging: boolean;

  constructor(private readonly logger: Pick<Logger, "debug" | "getLevelName">) {
    this.debugging = this.isDebugLevel();
  }

  private isDebugLevel(): boolean {
    return this.logger.getLevelName() === "DEBUG";
  }

  count(name: MetricName, value = 1, options: MetricOptions = {}): void {
    if (this.debugging) this.buffer.push(`${name}${dimensionsOf(options)}+${value}`);
  }

  timing(name: MetricName, ms: number, options: MetricOptions = {}): void {
    if (this.debugging) this.buffer.push(`${name}${dimensionsOf(options)}=${Math.round(ms)}ms`);
  }

  flush(): void {
    this.debugging = this.isDebugLevel();
    if (this.buffer.length === 0) return;
    this.logger.debug("metrics", { metrics: this.buffer.join(" ") });
    this.buffer = [];
  }
}

const dimensionsOf = ({ dimensions }: MetricOptions): string => {
  const entries = Object.entries(dimensions ?? {});
  return entries.length === 0 ? "" : `{${entries.map(([name, value]) => `${name}=${value}`).join(",")}}`;
};
