import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";

/** A job names its tenant: the queue serves tenants fairly (in AWS, an SQS fair queue: the MessageGroupId). */
export interface TenantJob {
  tenantId: string;
}

/** A queue of jobs run later by a worker (SQS and a Lambda consumer in AWS, in process locally). */
export interface JobQueue<J extends TenantJob = CallbackJob> {
  enqueue(job: J): Promise<void>;
}
