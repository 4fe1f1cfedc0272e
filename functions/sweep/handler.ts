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

/** Scheduled (EventBridge, every 15 minutes): deletes expired tokens and removes cvcs past their hour. */
export const handler = middy()
  .use(handlerTracing())
  .use(flushMetrics(() => deps?.metrics))
  .use(injectLambdaContext(logger, { logEvent: false }))
  .handler(async () => {
    deps ??= compose(config());
    const result = await sweepExpired(deps);
    logger.info("sweep finished", { ...result });
    deps.metrics.count(METRIC.sweepRuns);
    deps.metrics.count(METRIC.sweepTokensDeleted, result.tokensDeleted);
    return result;
  });
