import { describe, expect, it } from "vitest";
import { LocalMetrics } from "#shared/adapters/metrics/local-metrics.ts";
import { METRIC } from "#shared/observability/metric-names.ts";

/** A logger at `level`, and its level on Powertools' scale (what shared/logger.ts's logLevel answers). */
function logger(level: string) {
  const lines: unknown[] = [];
  const log = {
    lines,
    level,
    number: () => ({ DEBUG: 8, INFO: 12 })[log.level] ?? 12,
    debug: (...args: unknown[]) => {
      lines.push(args);
    },
  };
  return log;
}

describe("local mode's metrics", () => {
  it("at DEBUG prints each invocation's points as one line; otherwise drops them", () => {
    const debug = logger("DEBUG");
    const metrics = new LocalMetrics(debug, debug.number);
    metrics.count(METRIC.requests, 1, { dimensions: { route: "getToken" } });
    metrics.timing(METRIC.latency, 12.4, { dimensions: { route: "getToken" } });
    metrics.flush();
    expect(debug.lines).toEqual([
      ["metrics", { metrics: "Requests{route=getToken}+1 Latency{route=getToken}=12ms" }],
    ]);

    const info = logger("INFO");
    const quiet = new LocalMetrics(info, info.number);
    quiet.count(METRIC.requests);
    quiet.flush();
    expect(info.lines).toEqual([]);
  });

  it("follows a change of the log level from the next invocation (read once per flush)", () => {
    const log = logger("INFO");
    const metrics = new LocalMetrics(log, log.number);
    metrics.count(METRIC.requests);
    log.level = "DEBUG";
    metrics.flush();
    expect(log.lines).toEqual([]);
    metrics.count(METRIC.requests);
    metrics.flush();
    expect(log.lines).toEqual([["metrics", { metrics: "Requests+1" }]]);
  });
});
