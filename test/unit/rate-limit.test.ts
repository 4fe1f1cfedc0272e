import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { DynamoRequestBudget } from "#shared/adapters/dynamodb/request-budget.ts";
import { loadConfig } from "#shared/config.ts";
import {
  addressBucket,
  browserPolicy,
  leaseSize,
  ownBucketOfSub,
  RateLimiter,
  type RateLimitPolicy,
  retryAfterSeconds,
  searchPolicy,
  tenantBucket,
  tenantOfSubBucket,
  windowAt,
  windowLengthMs,
} from "#shared/domain/rate-limit.ts";
import { rateLimit } from "#shared/http/middleware/rate-limit.ts";
import type { SvcRequest } from "#shared/http/request-state.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { BudgetLease, RequestBudget } from "#shared/ports/request-budget.ts";

/** The shared counters as the DynamoDB adapter keeps them: never past the capacity. */
class MemoryBudget implements RequestBudget {
  readonly counters = new Map<string, number>();
  leases: BudgetLease[] = [];
  /** Called before each lease: may throw (a store error) or move the clock (latency). */
  before?: (request: BudgetLease) => void | Promise<void>;

  async lease(request: BudgetLease): Promise<number> {
    this.leases.push(request);
    await this.before?.(request);
    const key = `${request.bucket}/${request.window}`;
    const used = this.counters.get(key) ?? 0;
    const granted = Math.max(0, Math.min(request.wanted, request.capacity - used));
    this.counters.set(key, used + granted);
    return granted;
  }
}

function clockAt(ms: number): Clock & { ms: number } {
  const clock = { ms, now: () => new Date(clock.ms) };
  return clock;
}

async function admitMany(limiter: RateLimiter, bucket: string, count: number) {
  const results = [];
  for (let i = 0; i < count; i++) results.push(await limiter.admit(bucket));
  return results;
}

const allowed = (results: { allowed: boolean }[]) => results.filter((r) => r.allowed).length;

describe("rate-limit windows", () => {
  it("cuts time into windows of burst / rate seconds, aligned to the epoch, at least 1 s", () => {
    expect(windowLengthMs({ ratePerSecond: 100, burst: 1000 })).toBe(10_000);
    expect(windowLengthMs({ ratePerSecond: 0.1, burst: 3 })).toBe(30_000);
    expect(windowLengthMs({ ratePerSecond: 1000, burst: 10 })).toBe(1000);

    const window = windowAt({ ratePerSecond: 100, burst: 1000 }, 25_000);
    expect(window).toEqual({ id: 2, endsAtMs: 30_000, capacity: 1000 });
  });

  it("gives a window floored at 1 s what the rate allows in it", () => {
    expect(windowAt({ ratePerSecond: 1000, burst: 10 }, 0).capacity).toBe(1000);
  });

  it("leases a small share of a window first, at least 1 and at most 100", () => {
    expect(leaseSize(3)).toBe(1);
    expect(leaseSize(1000)).toBe(10);
    expect(leaseSize(10_000_000)).toBe(100);
  });

  it("tells a refused caller the whole seconds until the window ends, at least 1", () => {
    const window = windowAt({ ratePerSecond: 1, burst: 10 }, 0);
    expect(retryAfterSeconds(window, 0)).toBe(10);
    expect(retryAfterSeconds(window, 8_500)).toBe(2);
    expect(retryAfterSeconds(window, 9_999)).toBe(1);
  });
});

describe("RateLimiter", () => {
  const policy: RateLimitPolicy = { ratePerSecond: 100, burst: 1000 };

  it("admits a bucket's burst in a window, refuses the rest, and admits again in the next window", async () => {
    const clock = clockAt(0);
    const limiter = new RateLimiter(new MemoryBudget(), clock, { ratePerSecond: 1, burst: 5 });

    const first = await admitMany(limiter, "tenant#a", 7);
    clock.ms = 4_000;
    const later = await limiter.admit("tenant#a");
    clock.ms = 5_000;
    const next = await limiter.admit("tenant#a");

    expect(allowed(first)).toBe(5);
    expect(first[6]).toEqual({ allowed: false, retryAfterSeconds: 5 });
    expect(later).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(next).toEqual({ allowed: true });
  });

  it("counts a clock set back (the local test clock) in the window it then reads, not the last one it read", async () => {
    const budget = new MemoryBudget();
    const clock = clockAt(25_000); // window 2 of 10 s
    const limiter = new RateLimiter(budget, clock, policy);

    await limiter.admit("tenant#a");
    clock.ms = 5_000; // window 0
    await limiter.admit("tenant#a");
    clock.ms = 29_999; // window 2 again: a new bucket state, a new lease
    await limiter.admit("tenant#a");

    expect(budget.leases.map((l) => l.window)).toEqual([2, 0, 2]);
  });

  it("keeps buckets apart: one spent bucket does not touch another", async () => {
    const limiter = new RateLimiter(new MemoryBudget(), clockAt(0), { ratePerSecond: 1, burst: 2 });

    await admitMany(limiter, "tenant#a", 5);
    const other = await admitMany(limiter, "tenant#b", 2);

    expect(allowed(other)).toBe(2);
  });

  it("writes the shared counter once per lease, not once per request", async () => {
    const budget = new MemoryBudget();
    const limiter = new RateLimiter(budget, clockAt(0), policy);

    await admitMany(limiter, "tenant#a", 25);

    expect(budget.leases).toHaveLength(3);
    expect(budget.leases[0]).toMatchObject({ bucket: "tenant#a", window: 0, wanted: 10, capacity: 1000 });
    expect(budget.leases[0]?.expiresAt.getTime()).toBeGreaterThan(10_000);
  });

  it("doubles a busy bucket's blocks within a window, up to 1 % of its budget", async () => {
    const budget = new MemoryBudget();
    // 1,000,000 a window: the first block is 100, the largest 10,000.
    const limiter = new RateLimiter(budget, clockAt(0), { ratePerSecond: 100_000, burst: 1_000_000 });

    await admitMany(limiter, "tenant#a", 40_000);

    expect(budget.leases.map((l) => l.wanted)).toEqual([
      100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000,
    ]);
  });

  it("starts each window, and each bucket, again from the first block", async () => {
    const budget = new MemoryBudget();
    const clock = clockAt(0);
    const limiter = new RateLimiter(budget, clock, { ratePerSecond: 100_000, burst: 1_000_000 });

    await admitMany(limiter, "tenant#a", 301); // blocks of 100 and 200, then one of 400
    await admitMany(limiter, "tenant#b", 1);
    clock.ms = 10_000; // the next window
    await admitMany(limiter, "tenant#a", 1);

    expect(budget.leases.map((l) => `${l.bucket}@${l.window}:${l.wanted}`)).toEqual([
      "tenant#a@0:100",
      "tenant#a@0:200",
      "tenant#a@0:400",
      "tenant#b@0:100",
      "tenant#a@1:100",
    ]);
  });

  it("asks the shared counter no more once it answered that the window is spent", async () => {
    const budget = new MemoryBudget();
    const limiter = new RateLimiter(budget, clockAt(0), { ratePerSecond: 1, burst: 2 });

    await admitMany(limiter, "tenant#a", 50);

    expect(budget.leases).toHaveLength(3);
  });

  it("holds across processes: instances sharing the counters admit at most the burst together", async () => {
    const budget = new MemoryBudget();
    const clock = clockAt(0);
    const instances = Array.from({ length: 8 }, () => new RateLimiter(budget, clock, policy));

    const results = await Promise.all(instances.map((limiter) => admitMany(limiter, "tenant#a", 200)));

    const admitted = results.reduce((sum, r) => sum + allowed(r), 0);
    expect(admitted).toBe(1000);
  });

  it("under-admits at most what other instances leased and did not spend", async () => {
    const budget = new MemoryBudget();
    const clock = clockAt(0);
    const idle = new RateLimiter(budget, clock, policy);
    const busy = new RateLimiter(budget, clock, policy);

    const first = await idle.admit("tenant#a"); // leases 10, spends 1: 9 lapse unspent
    const results = await admitMany(busy, "tenant#a", 1000);

    expect(first.allowed).toBe(true);
    expect(allowed(results)).toBe(1000 - 10);
  });

  it("shares one lease among concurrent requests of a bucket", async () => {
    const budget = new MemoryBudget();
    const limiter = new RateLimiter(budget, clockAt(0), policy);

    const results = await Promise.all(Array.from({ length: 10 }, () => limiter.admit("tenant#a")));

    expect(allowed(results)).toBe(10);
    expect(budget.leases).toHaveLength(1);
  });

  it("lets requests through and reports the error when the shared counter cannot be reached", async () => {
    const errors: unknown[] = [];
    const failing: RequestBudget = { lease: () => Promise.reject(new Error("unreachable")) };
    const limiter = new RateLimiter(failing, clockAt(0), policy, { onLeaseError: (e) => errors.push(e) });

    const result = await limiter.admit("tenant#a");

    expect(result).toEqual({ allowed: true });
    expect(errors).toHaveLength(1);
  });

  it("refuses a policy without a positive rate", () => {
    expect(() => new RateLimiter(new MemoryBudget(), clockAt(0), { ratePerSecond: 0, burst: 1 })).toThrow();
  });
});

describe("addressBucket", () => {
  it("counts IPv4 callers by address, also when written as IPv4-mapped IPv6", () => {
    expect(addressBucket("203.0.113.7")).toBe("ip#203.0.113.7");
    expect(addressBucket("::ffff:203.0.113.7")).toBe("ip#203.0.113.7");
  });

  it("counts IPv6 callers by /64, however the address is written", () => {
    const bucket = addressBucket("2001:db8:0:1::1");
    expect(bucket).toBe("ip#2001:db8:0:1::/64");
    expect(addressBucket("2001:0DB8:0000:0001:ffff:ffff:ffff:fffe")).toBe(bucket);
    expect(addressBucket("2001:db8::1")).toBe("ip#2001:db8:0:0::/64");
    expect(addressBucket("::1")).toBe("ip#0:0:0:0::/64");
  });
});

const sharedClock = { ms: 0, now: () => new Date(sharedClock.ms) };

/** One warm Lambda instance: its own limiters in memory (composeCore), the shared counters. */
function instance(budget: RequestBudget, policy: RateLimitPolicy) {
  const ports = {
    rateLimiter: new RateLimiter(budget, sharedClock, policy, { onLeaseError: () => undefined }),
    // As composeCore builds it (shared/composition/core.ts).
    browserRateLimiter: new RateLimiter(budget, sharedClock, browserPolicy(policy), {
      parent: { policy, bucketOf: tenantOfSubBucket },
      onLeaseError: () => undefined,
    }),
    searchRateLimiter: new RateLimiter(budget, sharedClock, searchPolicy(policy), {
      onLeaseError: () => undefined,
    }),
    browserSearchRateLimiter: new RateLimiter(budget, sharedClock, browserPolicy(searchPolicy(policy)), {
      parent: { policy: searchPolicy(policy), bucketOf: ownBucketOfSub },
      onLeaseError: () => undefined,
    }),
  };
  const middleware = rateLimit(() => ports);
  return async (kind: "public" | "private" | "session", rateBucket?: string): Promise<number> => {
    const application = { type: kind === "public" ? "public" : "private" };
    const request = {
      event: { headers: {}, requestContext: { http: { sourceIp: "203.0.113.9" } } },
      context: {
        svc: {
          route: { group: "tokens", auth: "key", ...(rateBucket ? { rateBucket } : {}) },
          principal:
            kind === "session"
              ? { kind: "session", tenantId: "t1", application, session: {} }
              : { kind: "application", tenantId: "t1", application },
        },
      },
    } as unknown as SvcRequest;
    try {
      await middleware.before?.(request);
      return 200;
    } catch (error) {
      if ((error as { kind?: string }).kind === "rate-limited") return 429;
      throw error;
    }
  };
}

describe("the browser sub-budget (public keys, sessions) keeps the back end at least half", () => {
  it("holds when a public key is used once on each of 100 warm instances (each leased a tenant block of its own)", async () => {
    const policy = { ratePerSecond: 1000, burst: 10_000 }; // the defaults
    const budget = new MemoryBudget();
    sharedClock.ms = 1_000_000_000_000;
    // The attacker: one request with the public key copied from the checkout page, on each of 100 instances
    // of the tokens function (concurrent requests: API Gateway spreads them).
    const flood = await Promise.all(Array.from({ length: 100 }, () => instance(budget, policy)("public")));
    expect(flood.every((s) => s === 200)).toBe(true);
    // The merchant's back end, on an instance of another function (its proxy, applications, a fresh one).
    const backend = instance(budget, policy);
    const answers: number[] = [];
    for (let i = 0; i < 10; i++) answers.push(await backend("private"));
    // 100 browser requests admitted of the 5,000 the sub-budget allows; the back end should keep its 5,000.
    expect(answers).toEqual(Array(10).fill(200));
  });

  it("keeps the tenant's windows with an odd burst (shorter ones let a flood straddling two take nearly all)", async () => {
    const policy = { ratePerSecond: 1000, burst: 10_001 };
    expect(windowLengthMs(policy)).toBe(10_001);
    expect(windowLengthMs(browserPolicy(policy))).toBe(10_001); // it was 10,000
    const budget = new MemoryBudget();
    // Tenant window 100 starts at 1,000,100 ms; browser window 100 starts at 1,000,000 and 101 at 1,010,000.
    const one = instance(budget, policy);
    let _admitted = 0;
    sharedClock.ms = 1_000_100 + 10; // in tenant window 100, browser window 100 (its last 9.9 s)
    for (let i = 0; i < 6000; i++) if ((await one("public")) === 200) _admitted++;
    sharedClock.ms = 1_010_000 + 10; // still tenant window 100, browser window 101
    for (let i = 0; i < 6000; i++) if ((await one("public")) === 200) _admitted++;
    let backend = 0;
    for (let i = 0; i < 5000; i++) if ((await one("private")) === 200) backend++;
    // Half of 10,001 is 5,000: the back end should keep at least that in the window.
    expect(backend).toBeGreaterThanOrEqual(5000);
  });
});

describe("the browser sub-budget of a route's own budget (search)", () => {
  it("leaves the back end half the tenant's search budget when a browser session granted token:search floods it", async () => {
    // Review round 5 (suspected, Low): browser keys' searches spent the tenant's whole search budget.
    const policy = { ratePerSecond: 1000, burst: 10_000 }; // search: 100/s, a burst of 1,000
    const budget = new MemoryBudget();
    sharedClock.ms = 2_000_000_000_000;
    const one = instance(budget, policy);
    let flood = 0;
    for (let i = 0; i < 1000; i++) if ((await one("session", "search")) === 200) flood++;
    let backend = 0;
    for (let i = 0; i < 500; i++) if ((await one("private", "search")) === 200) backend++;
    expect(flood).toBe(500);
    expect(backend).toBe(500);
  });

  it("R6: a search budget of one per window (SVC_RATE_LIMIT_PER_SECOND=1): one browser search leaves the back end none", async () => {
    // Review round 6 (Low): searchPolicy rounds a burst of 10 to 1, and browserPolicy's "at least 1" makes the
    // browser share the whole of it: one session search per 10 s window answers every back-end search 429.
    const policy = { ratePerSecond: 1, burst: 10 }; // SVC_RATE_LIMIT_PER_SECOND=1, the default burst
    const budget = new MemoryBudget();
    sharedClock.ms = 3_000_000_000_000;
    const one = instance(budget, policy);
    expect(await one("session", "search")).toBe(200);
    expect(await one("private", "search")).toBe(200);
  });

  it("R6: the tenant's own budget is never one per window, so the browser half is never all of it", async () => {
    // The same rounding on the request budget: SVC_RATE_LIMIT_PER_SECOND=0.1 gave a default burst of 1.
    const { rateLimit: policy } = loadConfig({ SVC_RATE_LIMIT_PER_SECOND: "0.1" });
    expect(() => loadConfig({ SVC_RATE_LIMIT_PER_SECOND: "0.1", SVC_RATE_LIMIT_BURST: "1" })).toThrow(
      /SVC_RATE_LIMIT_BURST/,
    );
    const budget = new MemoryBudget();
    sharedClock.ms = 3_100_000_000_000;
    const one = instance(budget, policy);
    expect(await one("session")).toBe(200);
    expect(await one("session")).toBe(429);
    expect(await one("private")).toBe(200);
  });
});

describe("the browser sub-budget's leases from its tenant's counter (review round 4, 28 Nov 2026)", () => {
  it("F1: integer rate and burst still give the sub-budget shorter windows than the tenant's (float rounding)", async () => {
    const policy = { ratePerSecond: 48, burst: 183 }; // SVC_RATE_LIMIT_PER_SECOND=48, SVC_RATE_LIMIT_BURST=183
    // 183 / 48 = 3.8125 s: 3812.5 ms, rounded 3813; the sub-budget's 91 / (48 * 91 / 183) is 3812.4999… ms.
    expect(windowLengthMs(browserPolicy(policy))).toBe(windowLengthMs(policy));
  });

  it("F1b: ... and a browser flood straddling a sub-window boundary takes nearly all of one tenant window", async () => {
    const policy = { ratePerSecond: 48, burst: 183 };
    const budget = new MemoryBudget();
    const one = instance(budget, policy);
    const tenantLen = windowLengthMs(policy);
    const subLen = windowLengthMs(browserPolicy(policy));
    // A tenant window that holds a sub-window boundary.
    let id = 300_000_000;
    for (let tries = 0; tries < 100_000; tries++, id++)
      if (Math.floor((id * tenantLen) / subLen) !== Math.floor(((id + 1) * tenantLen - 1) / subLen)) break;
    const start = id * tenantLen;
    // The sub-budget's next window starting within this tenant window (its middle when the windows are one).
    const boundary =
      subLen === tenantLen ? start + Math.floor(tenantLen / 2) : Math.ceil(start / subLen) * subLen;
    sharedClock.ms = start + 1;
    let browser = 0;
    for (let i = 0; i < 200; i++) if ((await one("public")) === 200) browser++;
    sharedClock.ms = boundary + 1;
    for (let i = 0; i < 200; i++) if ((await one("public")) === 200) browser++;
    expect(windowAt(policy, sharedClock.ms).id).toBe(id); // still the same tenant window
    let backend = 0;
    for (let i = 0; i < 200; i++) if ((await one("private")) === 200) backend++;
    // Half of 183 is 91: the back end should keep at least 92 in the window.
    expect({ browser, backend }).toEqual({ browser: 91, backend: 92 });
  });

  it("F2: a parent lease failing after the sub lease landed spends the sub-budget: browsers refused afterwards with the tenant untouched", async () => {
    const policy = { ratePerSecond: 1000, burst: 10_000 };
    const budget = new MemoryBudget();
    sharedClock.ms = 2_000_000_000_000;
    // The tenant's counter item is throttled for a moment (a hot partition under a flood): 100 failures.
    let failures = 100;
    budget.before = (request) => {
      if (request.bucket === "tenant#t1" && failures > 0) {
        failures--;
        throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
      }
    };
    const one = instance(budget, policy);
    for (let i = 0; i < 100; i++) expect(await one("public")).toBe(200); // fail-open
    // The store is back. 100 browser requests were let through; the tenant's counter holds 0.
    expect(budget.counters.get(`tenant#t1/${windowAt(policy, sharedClock.ms).id}`) ?? 0).toBe(0);
    const after = await one("public");
    expect(after).toBe(200); // before the fix: 429, the sub-budget's 5,000 spent by 100 failed parent leases
  });

  it("F3: a parent lease landing in the next window leases the tenant's next window for a block spent in this one", async () => {
    const policy = { ratePerSecond: 1000, burst: 10_000 };
    const budget = new MemoryBudget();
    const len = windowLengthMs(policy);
    const w = 300_000_000;
    // 100 warm instances; each starts a browser lease 1 ms before the window ends and the store takes 5 ms.
    budget.before = () => {
      sharedClock.ms += 5;
    };
    let leaked = 0;
    for (let i = 0; i < 100; i++) {
      sharedClock.ms = (w + 1) * len - 1;
      await instance(budget, policy)("public");
    }
    leaked = budget.counters.get(`tenant#t1/${w + 1}`) ?? 0;
    budget.before = undefined;
    // In window w + 1: the sub-budget's own counter was not charged, so it still grants its 5,000 ...
    sharedClock.ms = (w + 1) * len + 100;
    const flood = instance(budget, policy);
    let browser = 0;
    for (let i = 0; i < 6000; i++) if ((await flood("public")) === 200) browser++;
    let backend = 0;
    const be = instance(budget, policy);
    for (let i = 0; i < 5000; i++) if ((await be("private")) === 200) backend++;
    expect({ leaked, browser }).toEqual({ leaked: 0, browser: 5000 });
    expect(backend).toBeGreaterThanOrEqual(5000);
  });

  it("clean: a back-end-only flood that spends the tenant's budget refuses browser keys too", async () => {
    const policy = { ratePerSecond: 1000, burst: 10_000 };
    const budget = new MemoryBudget();
    sharedClock.ms = 3_000_000_000_000;
    const be = instance(budget, policy);
    let backend = 0;
    for (let i = 0; i < 11_000; i++) if ((await be("private")) === 200) backend++;
    expect(backend).toBe(10_000);
    expect(await instance(budget, policy)("public")).toBe(429);
    expect(await be("public")).toBe(429);
  });

  it("F4: burst 1: the sub-budget is the tenant's whole budget", () => {
    const policy = { ratePerSecond: 1000, burst: 1 };
    expect(windowAt(browserPolicy(policy), 0).capacity).toBeLessThan(windowAt(policy, 0).capacity);
  });
});

/** A Map that counts the entries iterated over (the limiter's walk to make room). */
class CountingMap<K, V> extends Map<K, V> {
  visited = 0;
  override *[Symbol.iterator](): MapIterator<[K, V]> {
    for (const entry of super[Symbol.iterator]()) {
      this.visited += 1;
      yield entry;
    }
  }
}

describe("what one process remembers of many callers (availability review, 28 Nov 2026)", () => {
  /** RateLimiter's MAX_BUCKETS. */
  const MAX_BUCKETS = 10_000;

  it("keeps at most 10,000 buckets in a window, walking them once per thousand new callers, not once per caller", async () => {
    const clock = { now: () => new Date(1_000_000) };
    const granting: RequestBudget = { lease: async (request) => request.wanted };
    const limiter = new RateLimiter(granting, clock, { ratePerSecond: 1000, burst: 10_000 });
    const buckets = new CountingMap<string, unknown>();
    (limiter as unknown as { buckets: Map<string, unknown> }).buckets = buckets;
    const distinct = 15_000;
    for (let i = 0; i < distinct; i++) await limiter.admit(addressBucket(`10.0.${i >> 8}.${i & 255}`));
    expect(buckets.size).toBeLessThanOrEqual(MAX_BUCKETS);
    // Before: each of the 5,000 callers past the cap walked the whole map (62 million entries).
    expect(buckets.visited).toBeLessThanOrEqual(10 * distinct);
  });

  it("drops idle callers' buckets before a tenant's that keeps asking (review round 9)", async () => {
    const clock = { now: () => new Date(1_000_000) };
    const leases: string[] = [];
    const granting: RequestBudget = {
      lease: async (request) => {
        leases.push(request.bucket);
        return request.wanted;
      },
    };
    const limiter = new RateLimiter(granting, clock, { ratePerSecond: 1000, burst: 10_000 });
    const busy = tenantBucket("busy-tenant");
    await limiter.admit(busy); // the window's first: a block of 100
    for (let i = 0; i < 10_000; i++) {
      await limiter.admit(addressBucket(`10.1.${i >> 8}.${i & 255}`)); // one-off callers, idle after
      if (i % 100 === 0) await limiter.admit(busy); // the tenant asks all along
    }
    await limiter.admit(busy);
    // 102 requests in two blocks of 100; dropped while busy, its unspent block lapsed and it leased a third.
    expect(leases.filter((bucket) => bucket === busy)).toHaveLength(2);
  });

  it("forgets the last window of buckets beyond 10,000 callers (the local budget deletes spent windows)", async () => {
    const accepting = { send: async () => ({}) } as unknown as DynamoDBDocumentClient;
    const budget = new DynamoRequestBudget(accepting, "t", { deleteSpentWindows: true });
    // One request each from 30,000 loopback addresses (any local process may bind 127.x.y.z), over 30 windows.
    for (let i = 0; i < 30_000; i++)
      await budget.lease({
        bucket: addressBucket(`127.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`),
        window: Math.floor(i / 1000),
        wanted: 1,
        capacity: 10,
        expiresAt: new Date(0),
      });
    const kept = (budget as unknown as { lastWindow: Map<string, number> }).lastWindow.size;
    expect(kept).toBeLessThanOrEqual(MAX_BUCKETS);
  });
});
