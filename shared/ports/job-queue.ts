import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";

export interface JobQueue {
  enqueue(job: CallbackJob): Promise<void>;
}
