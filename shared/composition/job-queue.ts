import { SQSClient } from "@aws-sdk/client-sqs";
import { SqsJobQueue } from "#shared/adapters/aws/sqs-job-queue.ts";
import type { Config } from "#shared/config.ts";
import type { JobQueue } from "#shared/ports/job-queue.ts";
import { traced } from "#shared/tracer.ts";

/**
 * Asynchronous reactions' queue in AWS: SQS when SVC_CALLBACK_QUEUE_URL is set (else react refuses
 * callback_url). Locally the hosting composes an in-process LocalJobQueue instead (functions/local.ts).
 */
export function sqsJobQueue({ config }: { config: Config }): { jobQueue: JobQueue | undefined } {
  return {
    jobQueue: config.callbackQueueUrl
      ? new SqsJobQueue(traced(new SQSClient({ region: config.region })), config.callbackQueueUrl)
      : undefined,
  };
}
