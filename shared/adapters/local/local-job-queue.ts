import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { outsideAnyRequest } from "#shared/domain/idempotency-scope.ts";
import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";
import {
  DEFAULT_RETRY_BASE_SECONDS,
  DeliveryError,
  isRetryable,
  MAX_ATTEMPTS,
  retryDelaySeconds,
} from "#shared/domain/reactors/callbacks.ts";
import { logger } from "#shared/logger.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { JobQueue, TenantJob } from "#shared/ports/job-queue.ts";
import { FairReadyList } from "./fair-ready-list.ts";

/** One attempt at a job; `attempt` counts from 1 (as SQS's ApproximateReceiveCount). Throw to retry. */
export type JobHandler<J extends TenantJob = CallbackJob> = (job: J, attempt: number) => Promise<void>;

/** What the dead-letter store keeps of a job: identifiers and the outcome, never arguments or results. */
export interface DeadLetter {
  request_id: string;
  reactor_id: string;
  tenant_id: string;
  attempts: number;
  last_error: string;
  failed_at: string;
}

export interface LocalJobQueueOptions<J extends TenantJob = CallbackJob> {
  /** What a dead letter names of a job (default: a callback job's request, reactor and tenant). */
  letterOf?: (job: J) => Pick<DeadLetter, "request_id" | "reactor_id" | "tenant_id">;
  /** What a job is, in log lines (default "reactor callback"). */
  jobName?: string;
  /** The service's data dir; dead letters go to `<dataDir>/dead-letters/<requestId>.json`. */
  dataDir: string;
  /** Base of the exponential retry delay, in seconds (tests use ~0.05). Default DEFAULT_RETRY_BASE_SECONDS. */
  retryBaseSeconds?: number;
  /** Jobs handled at once. Default 4. */
  concurrency?: number;
  /** Jobs of one tenant handled at once. Default `concurrency - 1` (at least 1): one worker stays another's. */
  perTenant?: number;
  /** Attempts before dead-lettering. Default MAX_ATTEMPTS (the SQS redrive's maxReceiveCount). */
  maxAttempts?: number;
  /** Time stamped on dead letters. Default real time. */
  clock?: Clock;
}

interface Entry<J> {
  /** A copy made through JSON, as SQS would carry it. */
  job: J;
  attempts: number;
}

const SAFE_FILE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The local stand-in for the SQS callback queue, with its semantics: enqueue returns at once and a worker
 * picks the job up later (never inside the request); a failed attempt makes the job invisible for
 * `retryDelaySeconds(attempt)` (real timers); after `maxAttempts` attempts, or at once for a non-retryable
 * error, the job goes to the dead-letter store (files under the data dir) and a warning is logged. Tenants are
 * served fairly, as an SQS fair queue serves message groups (fair-ready-list.ts).
 *
 * In memory: jobs still queued when the process exits are lost (SQS keeps them). `stop()` keeps queued and
 * waiting jobs (waiting ones become ready at once) so `start()` resumes them.
 */
export class LocalJobQueue<J extends TenantJob = CallbackJob> implements JobQueue<J> {
  private readonly directory: string;
  private readonly retryBaseSeconds: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly clock: Clock;
  private readonly letterOf: NonNullable<LocalJobQueueOptions<J>["letterOf"]>;
  private readonly jobName: string;
  private handler: JobHandler<J> | undefined;
  private readonly ready: FairReadyList<Entry<J>>;
  private readonly waiting = new Map<NodeJS.Timeout, Entry<J>>();
  private readonly running = new Set<Promise<void>>();
  private pumpScheduled: NodeJS.Immediate | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(options: LocalJobQueueOptions<J>) {
    this.letterOf =
      options.letterOf ??
      ((job) => {
        // The default queue carries callback jobs (a queue of other jobs passes letterOf).
        const callback = job as unknown as CallbackJob;
        return {
          request_id: callback.requestId,
          reactor_id: callback.reactorId,
          tenant_id: callback.tenantId,
        };
      });
    this.jobName = options.jobName ?? "reactor callback";
    this.directory = join(options.dataDir, "dead-letters");
    this.retryBaseSeconds = options.retryBaseSeconds ?? DEFAULT_RETRY_BASE_SECONDS;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.ready = new FairReadyList(Math.max(1, options.perTenant ?? this.concurrency - 1));
    this.maxAttempts = Math.max(1, options.maxAttempts ?? MAX_ATTEMPTS);
    this.clock = options.clock ?? { now: () => new Date() };
  }

  async enqueue(job: J): Promise<void> {
    this.ready.push(job.tenantId, { job: JSON.parse(JSON.stringify(job)) as J, attempts: 0 });
    this.schedulePump();
  }

  /** Starts handing jobs to `handler`. */
  start(handler: JobHandler<J>): void {
    this.handler = handler;
    this.schedulePump();
  }

  /**
   * Stops taking jobs, cancels every retry timer (those jobs become ready again, for a later start) and
   * waits for the attempts in progress to finish. Leaves no timer behind.
   */
  async stop(): Promise<void> {
    this.handler = undefined;
    if (this.pumpScheduled) clearImmediate(this.pumpScheduled);
    this.pumpScheduled = undefined;
    for (const [timer, entry] of this.waiting) {
      clearTimeout(timer);
      this.ready.push(entry.job.tenantId, entry);
    }
    this.waiting.clear();
    await Promise.allSettled([...this.running]);
    this.notifyIdle();
  }

  /** Resolves once nothing is ready, waiting for a retry or running (or, after stop, nothing is running). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Jobs queued, waiting for a retry, or running. */
  get size(): number {
    return this.ready.length + this.waiting.size + this.running.size;
  }

  /** Every dead letter in the store (also those of earlier runs), oldest first. */
  async deadLetters(): Promise<DeadLetter[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const letters = await Promise.all(
      names
        .filter((name) => name.endsWith(".json"))
        .map(async (name) => JSON.parse(await readFile(join(this.directory, name), "utf8")) as DeadLetter),
    );
    return letters.sort((a, b) => a.failed_at.localeCompare(b.failed_at));
  }

  /** Path of a job's dead letter: the request id when it is file-name safe, its SHA-256 otherwise. */
  deadLetterPath(requestId: string): string {
    const name = SAFE_FILE_NAME.test(requestId)
      ? requestId
      : createHash("sha256").update(requestId, "utf8").digest("hex");
    return join(this.directory, `${name}.json`);
  }

  private isIdle(): boolean {
    return (
      this.running.size === 0 &&
      (this.handler === undefined || (this.ready.length === 0 && this.waiting.size === 0))
    );
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private schedulePump(): void {
    if (this.pumpScheduled || !this.handler) return;
    // Jobs run on their own, never as part of the request that queued them (its idempotency claim).
    this.pumpScheduled = outsideAnyRequest(() =>
      setImmediate(() => {
        this.pumpScheduled = undefined;
        this.pump();
      }),
    );
  }

  private pump(): void {
    const handler = this.handler;
    while (handler && this.running.size < this.concurrency) {
      const next = this.ready.take();
      if (!next) break;
      const { entry, tenant } = next;
      entry.attempts += 1;
      const run: Promise<void> = this.attempt(handler, entry).finally(() => {
        this.ready.done(tenant);
        this.running.delete(run);
        this.schedulePump();
        this.notifyIdle();
      });
      this.running.add(run);
    }
    this.notifyIdle();
  }

  private async attempt(handler: JobHandler<J>, entry: Entry<J>): Promise<void> {
    try {
      await handler(entry.job, entry.attempts);
      return;
    } catch (error) {
      if (isRetryable(error) && entry.attempts < this.maxAttempts) {
        this.retryLater(entry);
        return;
      }
      await this.deadLetter(entry, error);
    }
  }

  private retryLater(entry: Entry<J>): void {
    const delayMs = retryDelaySeconds(entry.attempts, this.retryBaseSeconds) * 1000;
    const timer = setTimeout(() => {
      this.waiting.delete(timer);
      this.ready.push(entry.job.tenantId, entry);
      this.schedulePump();
    }, delayMs);
    // A server stopping without stop() does not wait for retries.
    timer.unref();
    this.waiting.set(timer, entry);
  }

  private async deadLetter(entry: Entry<J>, error: unknown): Promise<void> {
    const letter: DeadLetter = {
      ...this.letterOf(entry.job),
      attempts: entry.attempts,
      last_error: safeMessage(error),
      failed_at: this.clock.now().toISOString(),
    };
    logger.warn(`${this.jobName} dead-lettered`, {
      request_id: letter.request_id,
      reactor_id: letter.reactor_id,
      tenant_id: letter.tenant_id,
      attempts: letter.attempts,
      last_error: letter.last_error,
    });
    try {
      await mkdir(this.directory, { recursive: true, mode: 0o700 });
      // Written aside, then renamed: a reader never sees a half-written letter.
      const path = this.deadLetterPath(letter.request_id);
      await writeFile(`${path}.tmp`, `${JSON.stringify(letter, null, 2)}\n`, { mode: 0o600 });
      await rename(`${path}.tmp`, path);
    } catch (writeError) {
      logger.error(`${this.jobName} dead letter could not be written`, {
        request_id: letter.request_id,
        error_name: writeError instanceof Error ? writeError.name : "unknown",
      });
    }
  }
}

/**
 * DeliveryError messages are written to be shown; any other error (a store's, a runner's) may carry
 * details, so only its name is kept.
 */
function safeMessage(error: unknown): string {
  if (error instanceof DeliveryError) return error.message;
  return error instanceof Error ? `${error.name}: the attempt failed` : "the attempt failed";
}
