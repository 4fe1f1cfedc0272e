import type { Logger } from "@aws-lambda-powertools/logger";
import type { MetricName } from "#shared/observability/metric-names.ts";
import type { FlushableMetrics, MetricOptions } from "#shared/ports/metrics.ts";

/**
 * Local mode's metrics: no EMF on stdout (a terminal full of JSON documents helps nobody). At log level DEBUG
 * each invocation's points are one readable line; otherwise they are dropped as they come.
 */
/** Powertools' number for DEBUG. */
const DEBUG = 8;

export class LocalMetrics implements FlushableMetrics {
  private buffer: string[] = [];
  /** Whether points are kept: the logger's level, read at each flush (once per invocation). */
  private debugging: boolean;

  /**
   * `level`: the logger's level on Powertools' scale (DEBUG is 8), as shared/logger.ts's `logLevel` keeps it:
   * Powertools' own getter reads the environment on every call, 50–60 µs a request in the bench's profiles on
   * Node 24 (29 Nov 2026).
   */
  constructor(
    private readonly logger: Pick<Logger, "debug">,
    private readonly level: () => number,
  ) {
    this.debugging = this.isDebugLevel();
  }

  private isDebugLevel(): boolean {
    return this.level() <= DEBUG;
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
