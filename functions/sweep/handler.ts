import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import { deps } from "#shared/container.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { logger } from "#shared/logger.ts";

/** Scheduled (EventBridge, every 15 minutes): deletes expired tokens and removes cvcs past their hour. */
export const handler = middy()
  .use(injectLambdaContext(logger, { logEvent: false }))
  .handler(async () => {
    const result = await sweepExpired(deps());
    logger.info("sweep finished", { ...result });
    return result;
  });
