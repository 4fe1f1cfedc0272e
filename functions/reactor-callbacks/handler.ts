import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import middy from "@middy/core";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { callbackDeps } from "#shared/composition/callbacks.ts";
import { composeCore } from "#shared/composition/core.ts";
import { egress } from "#shared/composition/egress.ts";
import { sandbox } from "#shared/composition/sandbox.ts";
import { reactorStore } from "#shared/composition/stores.ts";
import { tokenDomain } from "#shared/composition/token-domain.ts";
import { type Config, config } from "#shared/config.ts";
import {
  type CallbackDeps,
  DeliveryError,
  isRetryable,
  MAX_ATTEMPTS,
  parseCallbackJob,
  processCallbackJob,
  retryDelaySeconds,
} from "#shared/domain/reactors/callbacks.ts";
import { logger } from "#shared/logger.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import { flushMetrics } from "#shared/observability/metrics.ts";
import type { FlushableMetrics } from "#shared/ports/metrics.ts";
import { handlerTracing, traced } from "#shared/tracer.ts";

/**
 * The callback queue's consumer (SQS event source, ReportBatchItemFailures): one delivery attempt per record,
 * records of a batch in parallel. A record that fails is reported in batchItemFailures after its visibility
 * is set to the backoff (retryDelaySeconds of this receive), so SQS hands it back then; after
 * CALLBACK_MAX_RECEIVE_COUNT receives the redrive policy moves it to the dead-letter queue. A failure that no
 * retry can fix (malformed job, destination refused by the SSRF rules) is sent to the dead-letter queue at
 * once and reported as processed, so SQS deletes it from this queue.
 *
 * Environment (set by lib/constructs/callback-consumer.ts): SVC_CALLBACK_QUEUE_URL, SVC_CALLBACK_DLQ_URL.
 */

/** What the consumer works with: one delivery's deps, and the queue and dead-letter queue it answers. */
export interface CallbackConsumerPorts {
  callbacks: CallbackDeps;
  sqs: Pick<SQSClient, "send">;
  /** SVC_CALLBACK_QUEUE_URL and SVC_CALLBACK_DLQ_URL; a missing one fails the record that needs it. */
  queueUrl: string | undefined;
  deadLetterUrl: string | undefined;
  /** CallbackRecords by outcome, written once per batch. */
  metrics: FlushableMetrics;
}

/** The consumer's adapters: the reactors domain (it runs the reaction) and SQS, nothing of the HTTP chain. */
export function compose(cfg: Config): CallbackConsumerPorts {
  const core = composeCore(cfg);
  const reactors = {
    ...core,
    ...tokenDomain(core),
    ...reactorStore(core),
    ...sandbox(core),
    ...egress(),
    jobQueue: undefined,
  };
  return {
    callbacks: callbackDeps(reactors),
    sqs: traced(new SQSClient({ region: cfg.region })),
    queueUrl: cfg.callbackQueueUrl,
    deadLetterUrl: cfg.callbackDeadLetterUrl,
    metrics: core.metrics,
  };
}

function required(url: string | undefined, name: string): string {
  if (!url) throw new Error(`${name} is not set`);
  return url;
}

/** The consumer's Lambda handler over `ports`, built on the first batch. */
export function createCallbackConsumer(ports: () => CallbackConsumerPorts) {
  let composed: CallbackConsumerPorts | undefined;
  const consumer = (): CallbackConsumerPorts => {
    composed ??= ports();
    return composed;
  };
  const processor = new BatchProcessor(EventType.SQS);

  async function handleRecord(record: SQSRecord): Promise<void> {
    const attempt = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
    const outcome = (name: "delivered" | "retry" | "dead_letter") =>
      consumer().metrics.count(METRIC.callbackRecords, 1, { dimensions: { outcome: name } });
    try {
      const job = parseCallbackJob(record.body);
      await processCallbackJob(consumer().callbacks, job, attempt);
      outcome("delivered");
    } catch (error) {
      if (!isRetryable(error)) {
        await deadLetterNow(consumer(), record, attempt, error);
        outcome("dead_letter");
        return;
      }
      await deferRetry(consumer(), record, attempt);
      outcome("retry");
      throw error;
    }
  }

  return middy<SQSEvent, SQSBatchResponse>()
    .use(handlerTracing())
    .use(flushMetrics(() => composed?.metrics))
    .use(injectLambdaContext(logger, { logEvent: false }))
    .handler(async (event, context) =>
      // A batch whose every record failed is still an answer (all ids reported), not a function error: the
      // receivers' failures are not this function's, and each record already carries its own backoff.
      processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false }),
    );
}

/** Makes the record visible again after the backoff; at the last attempt at once, so the redrive moves it. */
async function deferRetry(ports: CallbackConsumerPorts, record: SQSRecord, attempt: number): Promise<void> {
  const seconds = attempt >= MAX_ATTEMPTS ? 0 : Math.ceil(retryDelaySeconds(attempt));
  logger.warn("reactor callback attempt failed", {
    message_id: record.messageId,
    attempt,
    retry_in_seconds: seconds,
  });
  try {
    await ports.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: required(ports.queueUrl, "SVC_CALLBACK_QUEUE_URL"),
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
  } catch (error) {
    // The record still comes back, after the queue's visibility timeout instead of the backoff.
    logger.error("could not set the callback's retry delay", {
      message_id: record.messageId,
      error_name: error instanceof Error ? error.name : "unknown",
    });
  }
}

/**
 * Moves the message to the dead-letter queue as it is (the same body the redrive would move, so an
 * operator's redrive works alike) with the reason as attributes. If that fails, the record is retried.
 */
async function deadLetterNow(
  ports: CallbackConsumerPorts,
  record: SQSRecord,
  attempt: number,
  error: unknown,
): Promise<void> {
  const reason = error instanceof DeliveryError ? error.message : "not retryable";
  await ports.sqs.send(
    new SendMessageCommand({
      QueueUrl: required(ports.deadLetterUrl, "SVC_CALLBACK_DLQ_URL"),
      MessageBody: record.body,
      MessageAttributes: {
        "svc-dead-letter-reason": { DataType: "String", StringValue: reason.slice(0, 1000) },
        "svc-attempts": { DataType: "Number", StringValue: String(attempt) },
        "svc-source-message-id": { DataType: "String", StringValue: record.messageId },
      },
    }),
  );
  logger.warn("reactor callback dead-lettered", { message_id: record.messageId, attempt, reason });
}

export const handler = createCallbackConsumer(() => compose(config()));
