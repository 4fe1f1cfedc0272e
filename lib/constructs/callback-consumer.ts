import { Annotations, Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IKey } from "aws-cdk-lib/aws-kms";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { type CfnQueue, type IQueue, Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { DELIVERY_TIMEOUT_MS, MAX_REACTION_TIMEOUT_MS } from "#shared/domain/reactors/callbacks.ts";
import { ApiFunction } from "./api-function.ts";
import type { SandboxRunners } from "./sandbox-runners.ts";

/**
 * The consumer runs a reaction (up to timeout_ms, at most 210 s) and then delivers it (10 s), records of a
 * batch in parallel; 30 s more covers the store, KMS and the secret. API functions stop at 29 s; this one
 * cannot.
 */
export const CALLBACK_CONSUMER_TIMEOUT = Duration.seconds(
  Math.ceil((MAX_REACTION_TIMEOUT_MS + DELIVERY_TIMEOUT_MS) / 1000) + 30,
);

/** AWS advises a source queue's visibility timeout of at least six times the consumer's timeout. */
export const CALLBACK_QUEUE_VISIBILITY_TIMEOUT = Duration.seconds(6 * CALLBACK_CONSUMER_TIMEOUT.toSeconds());

export const CALLBACK_BATCH_SIZE = 10;

/**
 * Consumer instances the callback queue may run at once by default: one tenant's backlog of slow reactions scales
 * the consumer no further, so it cannot take the account's concurrency from the API's functions (the queue is a
 * fair queue, so other tenants' jobs still go first: shared/adapters/aws/sqs-job-queue.ts).
 */
export const CALLBACK_MAX_CONCURRENCY = 50;

export interface CallbackConsumerProps {
  /** The callback queue (VaultData.callbackQueue); its redrive policy sends to `deadLetterQueue`. */
  queue: IQueue;
  /** VaultData.callbackDeadLetterQueue: the consumer sends jobs no retry can deliver straight there. */
  deadLetterQueue: IQueue;
  table: ITable;
  dataKey: IKey;
  logRetention?: RetentionDays;
  /**
   * The tenants' sandbox runners (VaultHttpApi.sandboxRunners) and the API's base URL (req.svc calls): the
   * consumer runs queued reactions in the tenant's runner, as the reactors function does synchronous ones.
   */
  sandbox?: { runners: SandboxRunners; apiUrl: string };
  /** How long the event source gathers records before invoking (default: none, invoke at once). */
  maxBatchingWindow?: Duration;
  /** Consumer instances at most (2–1000; default CALLBACK_MAX_CONCURRENCY). */
  maxConcurrency?: number;
}

/**
 * The reactor callback consumer: an SQS event source with partial batch responses on the callback queue,
 * and a function that runs each job's reaction and delivers it as a signed webhook (functions/reactor-callbacks).
 *
 * Grants, and nothing else (besides its own logs and X-Ray, as every ApiFunction):
 * - the callback queue: what the event source needs (CDK's consume grant: ReceiveMessage, DeleteMessage,
 *   ChangeMessageVisibility, GetQueueAttributes, GetQueueUrl); ChangeMessageVisibility also sets the backoff;
 * - the dead-letter queue: SendMessage only (refused destinations and malformed jobs go there at once);
 * - the table read/write (the reaction's result, audit entries) and the data key (opening the sealed args);
 * - the tenants' runner functions, when given (SandboxRunners.bind "run": create, wait for and invoke
 *   `<prefix>*`, pass the runner role to Lambda, read the bundle); the reaction's code runs there, never here.
 */
export class CallbackConsumer extends Construct {
  readonly fn: ApiFunction;
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly eventSource: SqsEventSource;

  constructor(scope: Construct, id: string, props: CallbackConsumerProps) {
    super(scope, id);
    this.queue = props.queue;
    this.deadLetterQueue = props.deadLetterQueue;

    this.fn = new ApiFunction(this, "ConsumerFunction", {
      group: "reactor-callbacks",
      description: "svc-vault reactor callback delivery (SQS consumer)",
      logRetention: props.logRetention,
    });
    // ApiFunction fixes 29 s (API Gateway's limit); a queue consumer waits for the longest reaction.
    (this.fn.function.node.defaultChild as CfnFunction).timeout = CALLBACK_CONSUMER_TIMEOUT.toSeconds();
    this.fn.bindTable(props.table, "readWrite").bindDataKey(props.dataKey);
    if (props.sandbox) props.sandbox.runners.bind(this.fn, "run", props.sandbox.apiUrl);

    this.fn.function.addEnvironment("SVC_CALLBACK_QUEUE_URL", props.queue.queueUrl);
    this.fn.function.addEnvironment("SVC_CALLBACK_DLQ_URL", props.deadLetterQueue.queueUrl);
    this.fn.function.addToRolePolicy(
      new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [props.deadLetterQueue.queueArn] }),
    );

    this.eventSource = new SqsEventSource(props.queue, {
      batchSize: CALLBACK_BATCH_SIZE,
      reportBatchItemFailures: true,
      maxConcurrency: props.maxConcurrency ?? CALLBACK_MAX_CONCURRENCY,
      ...(props.maxBatchingWindow ? { maxBatchingWindow: props.maxBatchingWindow } : {}),
    });
    this.fn.function.addEventSource(this.eventSource);

    ensureVisibilityTimeout(props.queue);
  }

  /**
   * Lets a producer (the reactors function) enqueue jobs: SVC_CALLBACK_QUEUE_URL and sqs:SendMessage on the
   * callback queue, nothing else (not GetQueueAttributes/GetQueueUrl, which CDK's grantSendMessages adds).
   */
  grantSend(producer: ApiFunction): void {
    producer.function.addEnvironment("SVC_CALLBACK_QUEUE_URL", this.queue.queueUrl);
    producer.function.addToRolePolicy(
      new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [this.queue.queueArn] }),
    );
  }
}

/**
 * A message being processed must stay invisible for longer than the consumer may run, or a second consumer
 * would pick it up mid-run. Raised on a queue defined in this app when it is shorter; an imported queue
 * cannot be changed, so synthesis warns.
 */
function ensureVisibilityTimeout(queue: IQueue): void {
  const required = CALLBACK_QUEUE_VISIBILITY_TIMEOUT.toSeconds();
  if (!(queue instanceof Queue)) {
    Annotations.of(queue).addWarningV2(
      "svc-vault:callbackQueueVisibility",
      `Set the callback queue's visibility timeout to at least ${required} s (6 × the consumer's timeout).`,
    );
    return;
  }
  const cfn = queue.node.defaultChild as CfnQueue;
  const current = typeof cfn.visibilityTimeout === "number" ? cfn.visibilityTimeout : 30;
  if (current < required) cfn.visibilityTimeout = required;
}
