import { METRIC } from "#shared/observability/metric-names.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import type { RequestBudget } from "#shared/ports/request-budget.ts";

/**
 * Per-bucket rate limits (a bucket is a tenant, or a source address for anonymous routes).
 *
 * Time is cut into fixed windows of `burst / ratePerSecond` seconds (at least 1 s), aligned to the epoch; a
 * bucket may spend `burst` requests per window. The budget of a window is one shared counter (RequestBudget),
 * so every process of the deployment draws from the same budget. A process does not touch the counter per
 * request: it leases a small block of requests at a time and serves from the block in memory. A window's
 * counter never passes its capacity, so all processes together admit at most `burst` requests per window per
 * bucket; what a process leased and did not spend lapses with the window.
 *
 * A bucket's blocks grow within a window: each lease takes twice the last, up to the lease share. A busy bucket
 * with a large budget then writes its counter a few times a window instead of once per 100 requests, and what a
 * process can leave unspent stays at most what it already spent in the window (or its first block).
 */
export interface RateLimitPolicy {
  /** Sustained requests per second per bucket; 0 turns limiting off. */
  ratePerSecond: number;
  /** Requests per window: how many a bucket may send at once. */
  burst: number;
}

export interface RateWindow {
  /** The window's number since the epoch: the counter's key. */
  id: number;
  endsAtMs: number;
  capacity: number;
}

export type Admission = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Leases are at most this share of a window's capacity, so many processes can still share a small budget. */
const LEASE_SHARE = 100;
/** Largest first block of a window: one counter write per this many requests until the blocks grow. */
const FIRST_LEASE_MAX = 100;
/** Counters are kept this long after their window (TTL), for inspection; nothing reads them then. */
const COUNTER_GRACE_SECONDS = 60;
/** Above this many buckets in memory, those of past windows are forgotten. */
const MAX_BUCKETS = 10_000;

export function windowLengthMs(policy: RateLimitPolicy): number {
  return Math.max(1000, Math.round((policy.burst / policy.ratePerSecond) * 1000));
}

/** The window `nowMs` falls in. */
export function windowAt(policy: RateLimitPolicy, nowMs: number): RateWindow {
  const length = windowLengthMs(policy);
  const id = Math.floor(nowMs / length);
  // A window longer than burst / rate (the 1 s floor) holds as much as the rate allows in it.
  const capacity = Math.max(policy.burst, Math.floor((policy.ratePerSecond * length) / 1000));
  return { id, endsAtMs: (id + 1) * length, capacity };
}

/** How many requests a window's first lease asks for: a small share of the window, at least one. */
export function leaseSize(capacity: number): number {
  return Math.min(FIRST_LEASE_MAX, largestLease(capacity));
}

/** The largest block a lease asks for, however busy the bucket: the lease share of the window, at least one. */
export function largestLease(capacity: number): number {
  return Math.max(1, Math.ceil(capacity / LEASE_SHARE));
}

/** The block after one of `block` was granted: twice as large, within the lease share. */
export function nextLease(block: number, capacity: number): number {
  return Math.min(block * 2, largestLease(capacity));
}

/** Whole seconds until the window ends, at least 1: the Retry-After of a refused request. */
export function retryAfterSeconds(window: RateWindow, nowMs: number): number {
  return Math.max(1, Math.ceil((window.endsAtMs - nowMs) / 1000));
}

interface BucketState {
  window: number;
  /** Leased and not yet spent in this process. */
  remaining: number;
  /** The shared counter answered 0: every request of this window is refused without asking again. */
  spent: boolean;
  /** What the next lease asks for (it grows with each lease of the window). */
  block: number;
  /** A lease on its way: concurrent requests of the bucket wait for it instead of leasing too. */
  pending?: Promise<void>;
}

export interface RateLimiterOptions {
  /** A lease failed (the store is unreachable): the request is let through, and this is told. */
  onLeaseError?: (error: unknown) => void;
  /** Counts each refusal (RateLimitRefusals; the tenant in metadata). */
  metrics?: Metrics;
  /**
   * A sub-budget of another bucket (browserPolicy): every block this limiter leases is leased from the parent
   * bucket's counter in the same write order, and only what both granted is spent, so the sub-budget's requests
   * need no admission of their own against the parent. Admitted against the parent's limiter apart, every
   * process a sub-budget's request reached leased a whole parent block (1 % of its budget) for a sub-budget block
   * of half that: a public key sent once to each of 100 warm instances leased the tenant's whole window, and the
   * back end was answered 429 (review r3b).
   */
  parent?: { policy: RateLimitPolicy; bucketOf: (bucket: string) => string };
}

/** The one answer of an admitted request (never changed by its callers). */
const ALLOWED: Admission = Object.freeze({ allowed: true });

export class RateLimiter {
  private readonly buckets = new Map<string, BucketState>();
  private readonly windowMs: number;
  private lastWindow: RateWindow | undefined;

  constructor(
    private readonly budget: RequestBudget,
    private readonly clock: Clock,
    readonly policy: RateLimitPolicy,
    private readonly options: RateLimiterOptions = {},
  ) {
    if (!(policy.ratePerSecond > 0) || !(policy.burst >= 1))
      throw new Error("A rate limit needs a positive rate and a burst of at least 1");
    // A sub-budget's blocks are leased from the parent's window of the same instant: the windows must be one.
    if (options.parent && windowLengthMs(options.parent.policy) !== windowLengthMs(policy))
      throw new Error("A sub-budget needs its parent's window length");
    this.windowMs = windowLengthMs(policy);
  }

  /**
   * Counts one request of `bucket`: allowed, or refused with the seconds until its window ends. Served from a
   * block this process leased, it answers at once (no promise: nearly every request); otherwise after a lease.
   */
  admit(bucket: string): Admission | Promise<Admission> {
    const nowMs = this.clock.now().getTime();
    const window = this.windowOf(nowMs);
    const state = this.stateOf(bucket, window);
    if (state.remaining > 0) {
      state.remaining -= 1;
      return ALLOWED;
    }
    return this.admitLeasing(bucket, window, nowMs, state);
  }

  /** The window `nowMs` falls in: the last one asked for while it lasts (one object per window, not per request). */
  private windowOf(nowMs: number): RateWindow {
    const last = this.lastWindow;
    if (last && nowMs < last.endsAtMs && nowMs >= last.endsAtMs - this.windowMs) return last;
    this.lastWindow = windowAt(this.policy, nowMs);
    return this.lastWindow;
  }

  private async admitLeasing(
    bucket: string,
    window: RateWindow,
    nowMs: number,
    state: BucketState,
  ): Promise<Admission> {
    for (;;) {
      if (state.remaining > 0) {
        state.remaining -= 1;
        return ALLOWED;
      }
      if (state.spent) {
        this.refused(bucket);
        return { allowed: false, retryAfterSeconds: retryAfterSeconds(window, nowMs) };
      }
      state.pending ??= this.lease(bucket, window, nowMs, state).finally(() => {
        state.pending = undefined;
      });
      // A failed lease lets this request through (fail-open: the limiter guards capacity, not access).
      const leased = await state.pending.then(
        () => true,
        () => false,
      );
      if (!leased) return { allowed: true };
    }
  }

  private refused(bucket: string): void {
    const tenantId = tenantOfBucket(bucket);
    this.options.metrics?.count(
      METRIC.rateLimitRefusals,
      1,
      tenantId ? { metadata: { tenant_id: tenantId } } : {},
    );
  }

  private async lease(bucket: string, window: RateWindow, nowMs: number, state: BucketState): Promise<void> {
    try {
      const granted = await this.budget.lease({
        bucket,
        window: window.id,
        wanted: state.block,
        capacity: window.capacity,
        expiresAt: new Date(window.endsAtMs + COUNTER_GRACE_SECONDS * 1000),
      });
      const parent = this.options.parent;
      let usable = granted;
      if (granted > 0 && parent) {
        // The parent's window of the instant this lease's window was taken, not of when the sub lease answered:
        // a sub lease answered after its window ended leased the parent's next window for a block spent in this
        // one, and the sub-budget's own counter of that window was never charged for it (review r4b).
        const outer = windowAt(parent.policy, nowMs);
        try {
          usable = await this.budget.lease({
            bucket: parent.bucketOf(bucket),
            window: outer.id,
            wanted: granted,
            capacity: outer.capacity,
            expiresAt: new Date(outer.endsAtMs + COUNTER_GRACE_SECONDS * 1000),
          });
        } catch (error) {
          // Fail-open with what the sub-budget granted: its counter has them, so dropping them (and failing again
          // on the next request) spent the sub-budget on errors alone, refusing browsers while the tenant had all
          // (review r4b). At most the sub-budget's block is admitted uncounted by the parent.
          this.options.onLeaseError?.(error);
          usable = granted;
        }
      }
      if (usable > 0) {
        state.remaining += usable;
        state.block = nextLease(state.block, window.capacity);
      } else state.spent = true;
    } catch (error) {
      this.options.onLeaseError?.(error);
      throw error;
    }
  }

  private stateOf(bucket: string, window: RateWindow): BucketState {
    let state = this.buckets.get(bucket);
    if (state && state.window === window.id) {
      // When makeRoom may come to run, each use moves its bucket to the end of the map's order, so it drops the
      // buckets idle longest, never a busy tenant's (review round 9); below that, the hot path is left alone.
      if (this.buckets.size > MAX_BUCKETS / 2) {
        this.buckets.delete(bucket);
        this.buckets.set(bucket, state);
      }
      return state;
    }
    if (!state && this.buckets.size >= MAX_BUCKETS) this.makeRoom(window.id);
    state = { window: window.id, remaining: 0, spent: false, block: leaseSize(window.capacity) };
    // Moved to the end of the map's order: a bucket of an earlier window is no older for it.
    this.buckets.delete(bucket);
    this.buckets.set(bucket, state);
    return state;
  }

  /**
   * Buckets of past windows go first, then the oldest of this one (their unspent leases lapse: fewer admitted,
   * never more), down to 90 %: the walk is paid once per thousand new buckets, not by each one (15,000 addresses
   * in one window walked 62 million entries: availability review, 28 Nov 2026).
   */
  private makeRoom(window: number): void {
    for (const [bucket, state] of this.buckets)
      if (state.window < window && !state.pending) this.buckets.delete(bucket);
    for (const [bucket, state] of this.buckets) {
      if (this.buckets.size < MAX_BUCKETS * 0.9) return;
      if (!state.pending) this.buckets.delete(bucket);
    }
  }
}

/** The bucket of a tenant's requests (every key, session and proxy of the tenant); its renders' share too. */
export const tenantBucket = (tenantId: string): string => `tenant#${tenantId}`;

/**
 * The sub-budget of a tenant's browser-held keys (public applications' keys and sessions), within the tenant's
 * own (browserPolicy): those keys are in every visitor's page, so anyone can spend what they draw on. A flood with
 * one copied from a checkout page answered the tenant's back end (private keys, proxies) 429 for the rest of every
 * window (front-end review, 28 Nov 2026); it now spends at most half the tenant's budget. A budget of its own
 * beside the tenant's would have doubled what one tenant may take of the API every tenant shares.
 */
export const browserBucket = (tenantId: string): string => `tenant#${tenantId}#browser`;

/**
 * The browser sub-budget's size: half the tenant's budget, in the tenant's own windows (the rate scaled with the
 * burst it rounds, so burst / rate stays the tenant's). Halving both, an odd burst gave the sub-budget shorter
 * windows (10,000 ms against 10,001): two of them met in one tenant window, and a flood straddling their
 * boundary took 10,000 of the tenant's 10,001 requests (review r3b).
 */
export function browserPolicy(policy: RateLimitPolicy): RateLimitPolicy {
  // Half of what the tenant's window holds (its capacity, not its burst: a window floored at 1 s holds the rate),
  // at a rate that gives back the tenant's window length itself: an integer, so no floating-point rounding of
  // burst / rate can land on the other side of .5 (48/s with a burst of 183 gave 3,812 ms against 3,813, review r4b).
  const length = windowLengthMs(policy);
  const burst = Math.max(1, Math.floor(windowAt(policy, 0).capacity / 2));
  return { ratePerSecond: (burst * 1000) / length, burst };
}

/** The tenant bucket a sub-budget's bucket (browserBucket) lies in. */
export const tenantOfSubBucket = (bucket: string): string => tenantBucket(tenantOfBucket(bucket) ?? "");

/**
 * A route's own budget within a sub-budget (`tenant#<id>#browser#search`) → the tenant's own budget of that route
 * (`tenant#<id>#search`): the parent of the browser keys' share of it.
 */
export const ownBucketOfSub = (bucket: string): string =>
  `${tenantOfSubBucket(bucket)}#${bucket.slice(bucket.lastIndexOf("#") + 1)}`;

/** The tenant of a bucket tenantBucket named (metrics' metadata), else undefined (an address bucket). */
export const tenantOfBucket = (bucket: string | undefined): string | undefined =>
  bucket?.startsWith("tenant#") ? bucket.slice("tenant#".length).split("#")[0] : undefined;

/**
 * The bucket of a caller without a key: its IPv4 address, or its IPv6 /64 (one host commonly holds a whole
 * /64, so counting single IPv6 addresses would give it unlimited buckets).
 */
export function addressBucket(sourceIp: string): string {
  const address = sourceIp.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (mapped) return `ip#${mapped[1]}`;
  if (!address.includes(":")) return `ip#${address}`;
  const [head = "", tail] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  const prefix = groups.slice(0, 4).map((group) => Number.parseInt(group || "0", 16).toString(16));
  return `ip#${prefix.join(":")}::/64`;
}

/**
 * Search's own budget (a separate bucket per tenant): a tenth of the request budget's rate, with a burst of a tenth
 * of its burst and at least 2 (its window then lasts longer at the same rate): handed-out keys search within half
 * of it (browserPolicy), and half of a burst of 1 is that 1, so one browser search per window left the back end
 * no search at all (SVC_RATE_LIMIT_PER_SECOND=1: review round 6).
 */
export function searchPolicy(policy: RateLimitPolicy): RateLimitPolicy {
  return { ratePerSecond: policy.ratePerSecond / 10, burst: Math.max(2, Math.ceil(policy.burst / 10)) };
}
