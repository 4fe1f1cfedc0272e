/**
 * How much expression rendering a request, and a tenant, may do (docs/expressions.md, "Render budgets").
 *
 * Renders are CPU work on the one thread of a process: a render holds the event loop until it ends. So each
 * request gets one budget for all its renders (masks, fingerprints, search indexes, ids, detokenization
 * filters, every token of a list, a reactor's `tokenize`), and every render draws from its tenant's share of
 * the process. Renders run one at a time, tenants served in turn, with the event loop let through between
 * them: another tenant's request waits for at most one render, and a tenant whose share is spent is refused
 * (429) until it refills on the clock port.
 *
 * Time is measured by a meter: the process's CPU time for requests (cpuMeter), performance.now() for the
 * engine's calls outside a request; tests inject one that counts work instead, so budgets are testable
 * without reading a clock.
 */
import { DomainError } from "#shared/domain/errors.ts";
import type { Clock } from "#shared/ports/clock.ts";
import { ExpressionError } from "./expression-filters.ts";
import type { RenderLimits } from "./render-limits.ts";

/** Milliseconds of a monotonic measure (render time is the difference of two readings). */
export type RenderMeter = () => number;

/**
 * The process's CPU time (user and system, every thread), in ms: what a request's renders are charged. Unlike
 * a wall clock it does not run while the process waits for a core, so a loaded machine does not shrink budgets.
 */
export const cpuMeter: RenderMeter = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/**
 * A render asks whether it is overdue at every template, filter and loop step; the meter is read at every
 * CHECK_EVERY-th question (a CPU reading is a system call), so a render may overrun by that many steps.
 */
export const CHECK_EVERY = 16;

export const TIME_LIMIT = "Expression exceeded its time limit";

/**
 * Real time in ms, read at every question to decide whether to read the meter although the count says not (no
 * system call): a step of 10–100 ms (a filter over 100,000 characters) asked once, so 16 of them ran between two
 * readings, 8–16 times the render's allowance (review of 27 Nov 2026). An injected meter, which counts work, comes
 * with a stopwatch that never moves, so what a test reads does not depend on the machine's speed.
 */
export type Stopwatch = () => number;
/** The meter is read at least this often (real time) while a render asks. */
export const READ_EVERY_MS = 2;
export const realTime: Stopwatch = () => performance.now();
export const stoppedWatch: Stopwatch = () => 0;

/** Whether the render is past its time; `now`: read the meter at this question (before a step that may cost much). */
export type Overdue = (now?: boolean) => boolean;

/** One request's renders (or one standalone call's): each render runs through here. */
export interface RenderBudget {
  /**
   * Runs one render when its turn comes, with a time limit: `overdue()` turns true once the render has used
   * up what it may (the render stops itself when it does). The time it took is charged afterwards.
   */
  run<T>(render: (overdue: Overdue) => Promise<T>): Promise<T>;
}

/** Runs `render` with at most `allowanceMs` of the meter; answers what it returned and the time it took. */
async function timed<T>(
  meter: RenderMeter,
  stopwatch: Stopwatch,
  allowanceMs: number,
  render: (overdue: Overdue) => Promise<T>,
): Promise<{ spent: number; result: Promise<T> }> {
  const start = meter();
  const deadline = start + allowanceMs;
  let checks = 0;
  let readAt = stopwatch();
  const result = render((now) => {
    const at = stopwatch();
    if (now !== true && ++checks % CHECK_EVERY !== 0 && at - readAt < READ_EVERY_MS) return false;
    readAt = at;
    return meter() > deadline;
  });
  await result.catch(() => undefined);
  return { spent: Math.max(0, meter() - start), result };
}

/**
 * A budget of `limitMs` for the renders of one call (the engine's calls outside any request), each render at
 * most `renderMs`. No tenant share and no turns: for code that is not serving a tenant's request.
 */
export function standaloneBudget(
  limitMs: number,
  renderMs: number,
  meter: RenderMeter,
  stopwatch: Stopwatch = stoppedWatch,
): RenderBudget {
  let remaining = limitMs;
  return {
    async run(render) {
      if (remaining <= 0) throw new ExpressionError(TIME_LIMIT);
      const { spent, result } = await timed(meter, stopwatch, Math.min(remaining, renderMs), render);
      remaining -= spent;
      return result;
    },
  };
}

interface Share {
  /** Render milliseconds left (negative: overdrawn by the last render). */
  level: number;
  /** Clock time (ms) of the last refill. */
  at: number;
}

const shareSpent = (retryAfterSeconds: number) =>
  new DomainError(
    "rate-limited",
    `The tenant's expression render time is spent for now; retry in ${retryAfterSeconds} s.`,
    { code: "render-budget-spent", retryAfterSeconds },
  );

/** At most this many tenants' shares are kept; the oldest full ones are dropped first (a new share is full). */
const MAX_SHARES = 10_000;

/**
 * The process's renders: one at a time, tenants in turn, each tenant within its share, each request within
 * its budget. One per process (the composition builds it).
 */
export class RenderScheduler {
  private busy = false;
  /** Tenants with renders waiting, in turn order (a tenant served goes to the back). */
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly shares = new Map<string, Share>();

  constructor(
    private readonly limits: RenderLimits,
    private readonly clock: Clock,
    private readonly meter: RenderMeter = cpuMeter,
    /** Lets the event loop through (I/O of other requests) before a render starts. */
    private readonly yieldTurn: () => Promise<void> = () => new Promise((resolve) => setImmediate(resolve)),
    private readonly stopwatch: Stopwatch = meter === cpuMeter ? realTime : stoppedWatch,
  ) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isFinite(value) || value < 0 || (value === 0 && name !== "tenantMsPerSecond"))
        throw new RangeError(`${name} must be a positive number`);
    }
  }

  /** A new request's budget: `requestMs` for all its renders, drawn from `bucket`'s share (its tenant). */
  budget(bucket: string): RenderBudget {
    let remaining = this.limits.requestMs;
    const budget: RenderBudget = {
      run: async (render) => {
        if (remaining <= 0) throw new ExpressionError(TIME_LIMIT);
        await this.turn(bucket);
        try {
          this.admit(bucket);
          const allowance = Math.min(remaining, this.limits.renderMs);
          const { spent, result } = await timed(this.meter, this.stopwatch, allowance, render);
          remaining -= spent;
          this.charge(bucket, spent);
          return await result;
        } finally {
          this.release(bucket);
        }
      },
    };
    return budget;
  }

  /** Waits for the render slot; with others waiting, tenants take turns. */
  private async turn(bucket: string): Promise<void> {
    await this.yieldTurn();
    if (!this.busy) {
      this.busy = true;
      return;
    }
    await new Promise<void>((resolve) => {
      const queue = this.waiting.get(bucket);
      if (queue) queue.push(resolve);
      else this.waiting.set(bucket, [resolve]);
    });
  }

  /**
   * Hands the slot to the next tenant in turn (the slot stays busy), or frees it. The tenant that just
   * rendered goes after every other waiting tenant.
   */
  private release(served: string): void {
    let next: [string, (() => void)[]] | undefined;
    for (const entry of this.waiting) {
      next = entry;
      if (entry[0] !== served) break;
    }
    if (!next) {
      this.busy = false;
      return;
    }
    const [bucket, queue] = next;
    this.waiting.delete(bucket);
    const wake = queue.shift();
    if (queue.length > 0) this.waiting.set(bucket, queue);
    wake?.();
  }

  private share(bucket: string): Share | undefined {
    const { tenantMsPerSecond, tenantBurstMs } = this.limits;
    if (tenantMsPerSecond === 0) return undefined;
    const now = this.clock.now().getTime();
    let share = this.shares.get(bucket);
    if (!share) {
      share = { level: tenantBurstMs, at: now };
      if (this.shares.size >= MAX_SHARES) this.dropFullShares(now);
      this.shares.set(bucket, share);
    }
    const elapsed = Math.max(0, now - share.at);
    share.level = Math.min(tenantBurstMs, share.level + (elapsed / 1000) * tenantMsPerSecond);
    share.at = now;
    return share;
  }

  /** Shares that have refilled are the same as new ones: forgetting them loses nothing. */
  private dropFullShares(now: number): void {
    const { tenantMsPerSecond, tenantBurstMs } = this.limits;
    for (const [bucket, share] of this.shares) {
      const level = share.level + ((now - share.at) / 1000) * tenantMsPerSecond;
      if (level >= tenantBurstMs) this.shares.delete(bucket);
    }
    // All overdrawn at once (a flood of tenants): the oldest go; at worst a tenant gets a fresh share early.
    while (this.shares.size >= MAX_SHARES) {
      const oldest = this.shares.keys().next();
      if (oldest.done) break;
      this.shares.delete(oldest.value);
    }
  }

  /** Refuses a render of a tenant whose share is spent (429 with the time until it is positive again). */
  private admit(bucket: string): void {
    const share = this.share(bucket);
    if (!share || share.level > 0) return;
    const seconds = Math.ceil((1 - share.level) / this.limits.tenantMsPerSecond);
    throw shareSpent(Math.max(1, seconds));
  }

  private charge(bucket: string, spent: number): void {
    const share = this.share(bucket);
    if (share) share.level -= spent;
  }
}
