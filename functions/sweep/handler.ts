import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import { composeCore } from "#shared/composition/core.ts";
import { sweepStore, tokenStores } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { logger } from "#shared/logger.ts";

/** The sweep's adapters: the token, transaction, session and sweep stores. */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...tokenStores(core), ...sweepStore(core) };
}

let deps: ReturnType<typeof compose> | undefined;

/** Scheduled (EventBridge, every 15 minutes): deletes expired tokens and removes cvcs past their hour. */
export const handler = middy()
  .use(injectLambdaContext(logger, { logEvent: false }))
  .handler(async () => {
    deps ??= compose(config());
    const result = await sweepExpired(deps);
    logger.info("sweep finished", { ...result });
    return result;
  });
