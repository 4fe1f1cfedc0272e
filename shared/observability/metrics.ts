import type middy from "@middy/core";
import { EmfMetrics } from "#shared/adapters/metrics/emf-metrics.ts";
import { LocalMetrics } from "#shared/adapters/metrics/local-metrics.ts";
import type { Config } from "#shared/config.ts";
import { logger, logLevel } from "#shared/logger.ts";
import type { FlushableMetrics } from "#shared/ports/metrics.ts";

/**
 * The metrics adapter of a composition: EMF through Powertools in AWS (CloudWatch reads the function's log
 * lines), readable debug lines locally (no EMF documents in the terminal).
 */
export function metricsAdapter(cfg: Pick<Config, "mode">): FlushableMetrics {
  return cfg.mode === "aws" ? new EmfMetrics() : new LocalMetrics(logger, logLevel);
}

/**
 * Writes what the invocation recorded, once, when it ends (answered or failed): for the first `.use` of every
 * function's middy chain, so nothing recorded inside it is left for the next invocation. `metrics` answers
 * undefined while the function has composed nothing (then nothing was recorded).
 */
export function flushMetrics(metrics: () => FlushableMetrics | undefined): middy.MiddlewareObj {
  const flush = () => {
    try {
      metrics()?.flush();
    } catch (error) {
      // A metric never fails a request: the answer is already decided.
      logger.warn("metrics flush failed", { error_name: error instanceof Error ? error.name : "unknown" });
    }
  };
  return { after: flush, onError: flush };
}
