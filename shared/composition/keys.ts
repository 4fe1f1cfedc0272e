import { SQSClient } from "@aws-sdk/client-sqs";
import { SqsJobQueue } from "#shared/adapters/aws/sqs-job-queue.ts";
import { DynamoRewrapJobStore } from "#shared/adapters/dynamodb/rewrap-job-store.ts";
import type { JobQueue } from "#shared/ports/job-queue.ts";
import type { RewrapPageMessage } from "#shared/ports/key-versions.ts";
import { traced } from "#shared/tracer.ts";
import type { Table } from "./table.ts";

const noQueue: JobQueue<RewrapPageMessage> = {
  enqueue: async () => {
    throw new Error("No rewrap queue (SVC_REWRAP_QUEUE_URL is not set)");
  },
};

/**
 * Key custody's own adapters: rewrap jobs, and the queue of their pages (SQS in AWS when SVC_REWRAP_QUEUE_URL is
 * set; locally the hosting composes an in-process LocalJobQueue instead, functions/local.ts).
 */
export function keyCustody({ dynamo, config, audit }: Table) {
  return {
    rewrapJobs: new DynamoRewrapJobStore(dynamo, config.tableName, audit),
    rewrapQueue: config.rewrapQueueUrl
      ? (new SqsJobQueue<RewrapPageMessage>(
          traced(new SQSClient({ region: config.region })),
          config.rewrapQueueUrl,
        ) as JobQueue<RewrapPageMessage>)
      : noQueue,
  };
}
