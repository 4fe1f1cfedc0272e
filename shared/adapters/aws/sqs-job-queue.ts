import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";
import type { JobQueue, TenantJob } from "#shared/ports/job-queue.ts";

/**
 * Largest job message sent: SQS's long-standing 256 KiB message limit (newer queues accept more; this
 * stays within what every queue accepts). The arguments are sealed, so the limit bounds them at roughly
 * 190 KB of JSON; react should refuse larger ones (413) before enqueueing.
 */
export const MAX_JOB_BYTES = 256 * 1024;

export class JobTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(`The reaction job is ${bytes} bytes; the queue takes at most ${MAX_JOB_BYTES}.`);
    this.name = "JobTooLargeError";
  }
}

/**
 * The callback queue in AWS: one SendMessage per job, the job as JSON. The job holds the arguments only
 * sealed under the tenant's data key, so the queue never sees plaintext; the consumer
 * (functions/reactor-callbacks) runs and delivers it. The tenant is the message group: a standard queue with
 * MessageGroupIds is an SQS fair queue, which serves a quiet tenant's messages before a noisy one's backlog.
 */
export class SqsJobQueue<J extends TenantJob = CallbackJob> implements JobQueue<J> {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(job: J): Promise<void> {
    const body = JSON.stringify(job);
    const bytes = Buffer.byteLength(body, "utf8");
    if (bytes > MAX_JOB_BYTES) throw new JobTooLargeError(bytes);
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body, MessageGroupId: job.tenantId }),
    );
  }
}
