import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";

/** A queue of jobs run later by a worker (SQS and a Lambda consumer in AWS, in process locally). */
export interface JobQueue<J = CallbackJob> {
  enqueue(job: J): Promise<void>;
}
