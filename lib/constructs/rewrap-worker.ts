import { Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IKey } from "aws-cdk-lib/aws-kms";
import { RecursiveLoop } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { ApiFunction } from "./api-function.ts";

/** Receives of one page before it goes to the dead-letter queue. */
export const REWRAP_MAX_RECEIVE_COUNT = 5;
/**
 * Workers at once: each runs one tenant's job page by page (a tenant runs one job at a time), so this many tenants
 * rewrap at full speed and the rest wait their turn on the fair queue, without taking the account's concurrency.
 */
export const REWRAP_MAX_CONCURRENCY = 10;

export interface RewrapWorkerProps {
  table: ITable;
  dataKey: IKey;
  logRetention?: RetentionDays;
}

/**
 * Key rewrap jobs (shared/domain/keys/rewrap.ts): a queue of pages (messages name a job and a page, never data)
 * with its dead-letter queue, and the worker that re-seals one page per message and sends the next. Queue-driven
 * rather than one long function: each page is a short invocation, and a crash costs one page's retry.
 *
 * Grants: the queue (consume, and send: the worker queues the next page), the table and the data key.
 */
export class RewrapWorker extends Construct {
  readonly fn: ApiFunction;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: RewrapWorkerProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, "DeadLetterQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.fn = new ApiFunction(this, "WorkerFunction", {
      group: "rewrap",
      description: "svc-vault key rewrap worker (SQS consumer)",
      logRetention: props.logRetention,
      // Each page queues the next to this same function: Lambda's loop detection would stop a tenant's rewrap
      // after 16 pages (about 400 tokens), its page dead-lettered and the rest left under the old key.
      recursiveLoop: RecursiveLoop.ALLOW,
    });
    // Six times the worker's timeout (29 s), as AWS advises for an event source's queue.
    this.queue = new Queue(this, "Queue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(6 * 29),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: REWRAP_MAX_RECEIVE_COUNT },
    });
    this.fn.bindTable(props.table, "readWrite").bindDataKey(props.dataKey);
    this.grantSend(this.fn);
    this.fn.function.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: REWRAP_MAX_CONCURRENCY,
      }),
    );
  }

  /** Lets a producer (the tenants function, the worker itself) send pages: the URL and sqs:SendMessage only. */
  grantSend(producer: ApiFunction): void {
    producer.function.addEnvironment("SVC_REWRAP_QUEUE_URL", this.queue.queueUrl);
    producer.function.addToRolePolicy(
      new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [this.queue.queueArn] }),
    );
  }
}
