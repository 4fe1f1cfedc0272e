import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { composeCore } from "#shared/composition/core.ts";
import { keyCustody } from "#shared/composition/keys.ts";
import { proxyStore, reactorStore } from "#shared/composition/stores.ts";
import { tokenDomain } from "#shared/composition/token-domain.ts";
import { type Config, config } from "#shared/config.ts";
import { type KeyJobDeps, processKeyJob } from "#shared/domain/keys/key-jobs.ts";
import { logger } from "#shared/logger.ts";
import type { KeyJobMessage } from "#shared/ports/key-versions.ts";
import { handlerTracing } from "#shared/tracer.ts";

/**
 * The worker's adapters: the token domain (it opens, seals and hashes), key versions, jobs and their queue, and the
 * proxies and reactor stores (proxy keys, proxies' and reactors' configurations and the webhook secret are re-sealed
 * too).
 */
export function compose(cfg: Config): KeyJobDeps {
  const core = composeCore(cfg);
  return { ...core, ...tokenDomain(core), ...keyCustody(core), ...proxyStore(core), ...reactorStore(core) };
}

function parseMessage(body: string): KeyJobMessage {
  const message = JSON.parse(body) as Partial<KeyJobMessage> & Record<string, unknown>;
  if (typeof message.tenantId !== "string") throw new Error("Not a key job");
  if (message.kind === "custody") {
    if (typeof message.keyArn !== "string") throw new Error("Not a key job");
    return { kind: "custody", tenantId: message.tenantId, keyArn: message.keyArn };
  }
  if (message.kind !== "rewrap" || typeof message.jobId !== "string") throw new Error("Not a rewrap page");
  if (typeof message.page !== "number" || !Number.isInteger(message.page))
    throw new Error("Not a rewrap page");
  return { kind: "rewrap", tenantId: message.tenantId, jobId: message.jobId, page: message.page };
}

let deps: KeyJobDeps | undefined;
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
        await processKeyJob(deps, parseMessage(record.body));
      },
      processor,
      { context, throwOnFullBatchFailure: false },
    ),
  );
