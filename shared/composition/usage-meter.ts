import { CapacityMeter, type CapacityTotals } from "#shared/adapters/dynamodb/consumed-capacity.ts";
import type { JobQueue } from "#shared/ports/job-queue.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";

/**
 * What a run of requests used of each billed service: table capacity, key-wrapper (KMS) calls, queued jobs and
 * runs of tenant code.
 */
export interface Usage extends CapacityTotals {
  /** generateDataKey and unwrap calls (KMS GenerateDataKey and Decrypt in AWS). */
  keyWrapperCalls: number;
  /** Jobs enqueued (SQS SendMessage in AWS). */
  jobsQueued: number;
  /** Runs of tenant code (a runner function's invocation in AWS) and their summed wall time (ms). */
  sandboxRuns: number;
  sandboxMs: number;
}

/**
 * Counts what the service uses through its ports, for `npm run cost` only: the composition installs it on the
 * table client, the key wrapper, the job queue and the sandbox when one is given (startLocalService's `meter`), and never
 * otherwise.
 */
export class UsageMeter {
  readonly capacity = new CapacityMeter();
  private keyWrapperCalls = 0;
  private jobsQueued = 0;
  private sandboxRuns = 0;
  private sandboxMs = 0;

  /** The usage since the last take, and a fresh start. */
  take(): Usage {
    const usage = {
      ...this.capacity.take(),
      keyWrapperCalls: this.keyWrapperCalls,
      jobsQueued: this.jobsQueued,
      sandboxRuns: this.sandboxRuns,
      sandboxMs: this.sandboxMs,
    };
    this.keyWrapperCalls = 0;
    this.jobsQueued = 0;
    this.sandboxRuns = 0;
    this.sandboxMs = 0;
    return usage;
  }

  keyWrapper(inner: KeyWrapper): KeyWrapper {
    return {
      generateDataKey: (context) => {
        this.keyWrapperCalls += 1;
        return inner.generateDataKey(context);
      },
      unwrap: (wrapped, context) => {
        this.keyWrapperCalls += 1;
        return inner.unwrap(wrapped, context);
      },
    };
  }

  sandbox(inner: Sandbox): Sandbox {
    const counted: Sandbox = {
      run: async (request) => {
        const started = performance.now();
        try {
          return await inner.run(request);
        } finally {
          this.sandboxRuns += 1;
          this.sandboxMs += performance.now() - started;
        }
      },
      close: () => inner.close(),
    };
    if (inner.warm) counted.warm = () => inner.warm?.() ?? Promise.resolve();
    if (inner.prepare) counted.prepare = (tenantId) => inner.prepare?.(tenantId) ?? Promise.resolve();
    return counted;
  }

  jobQueue(inner: JobQueue): JobQueue {
    return {
      enqueue: (job) => {
        this.jobsQueued += 1;
        return inner.enqueue(job);
      },
    };
  }
}
