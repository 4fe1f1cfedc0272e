import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { composeCore } from "#shared/composition/core.ts";
import { keyCustody } from "#shared/composition/keys.ts";
import { proxyStore, reactorStore } from "#shared/composition/stores.ts";
import { tokenDomain } from "#shared/composition/token-domain.ts";
import { type Config, config } from "#shared/config.ts";
import { processRewrapPage, type RewrapDeps } from "#shared/domain/keys/rewrap.ts";
import { logger } from "#shared/logger.ts";
import type { RewrapPageMessage } from "#shared/ports/key-versions.ts";
import { handlerTracing } from "#shared/tracer.ts";

/**
 * The worker's adapters: the token domain (it opens, seals and hashes), key versions, jobs and their queue, and the
 * proxies and reactor stores (proxy keys, proxies' and reactors' configurations and the webhook secret are re-sealed
 * too).
 */
export function compose(cfg: Config): RewrapDeps {
  const core = composeCore(cfg);
  return { ...core, ...tokenDomain(core), ...keyCustody(core), ...proxyStore(core), ...reactorStore(core) };
}

function parsePage(body: string): RewrapPageMessage {
  const page = JSON.parse(body) as Partial<RewrapPageMessage>;
  if (page.kind !== "rewrap" || typeof page.tenantId !== "string" || typeof page.jobId !== "string")
    throw new Error("Not a rewrap page");
  if (typeof page.page !== "number" || !Number.isInteger(page.page)) throw new Error("Not a rewrap page");
  return page as RewrapPageMessage;
}

let deps: RewrapDeps | undefined;
const processor = new BatchProcessor(EventType.SQS);

/**
 * The rewrap queue's consumer (SQS event source, ReportBatchItemFailures): one page per record. A page that
 * fails is reported and comes back after the visibility timeout; re-delivery is harmless (the job's stored
 * progress decides), and after the redrive's receive count the page goes to the dead-letter queue, the job
 * staying `running` with its progress (a new rewrap takes over from the start, skipping tokens already done).
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(handlerTracing())
  .use(injectLambdaContext(logger, { logEvent: false }))
  .handler(async (event, context) =>
    processPartialResponse(
      event,
      async (record: SQSRecord) => {
        deps ??= compose(config());
        await processRewrapPage(deps, parsePage(record.body));
      },
      processor,
      { context, throwOnFullBatchFailure: false },
    ),
  );
