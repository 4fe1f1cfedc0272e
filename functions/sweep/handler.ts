import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import { sessionStore, sweepStore, tokenStores } from "#shared/composition/stores.ts";
import { composeTable } from "#shared/composition/table.ts";
import { type Config, config } from "#shared/config.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { logger } from "#shared/logger.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import { flushMetrics } from "#shared/observability/metrics.ts";
import { handlerTracing } from "#shared/tracer.ts";

/** The sweep's adapters: the token, transaction, session and sweep stores (no KMS: it opens no data). */
export function compose(cfg: Config) {
  const table = composeTable(cfg);
  return { ...table, ...tokenStores(table), ...sessionStore(table), ...sweepStore(table) };
}

let deps: ReturnType<typeof compose> | undefined;

/** What the sweep leaves of the function's time limit: the page or item in progress and the log line finish in it. */
const STOP_MARGIN_MS = 30_000;

/**
 * Scheduled (EventBridge, every 15 minutes): deletes expired tokens, removes cvcs past their hour, and purges
 * deleted tenants, within its time limit (the purge has at least half of it: sweepExpired).
 */
export const handler = middy()
  .use(handlerTracing())
  .use(flushMetrics(() => deps?.metrics))
  .use(injectLambdaContext(logger, { logEvent: false }))
  .handler(async (_event: unknown, context: { getRemainingTimeInMillis(): number }) => {
    deps ??= compose(config());
    const stopBy = new Date(deps.clock.now().getTime() + context.getRemainingTimeInMillis() - STOP_MARGIN_MS);
    const result = await sweepExpired(deps, { stopBy });
    logger.info("sweep finished", { ...result });
    deps.metrics.count(METRIC.sweepRuns);
    deps.metrics.count(METRIC.sweepTokensDeleted, result.tokensDeleted);
    deps.metrics.count(METRIC.sweepItemsPutOff, result.itemsPutOff);
    return result;
  });
