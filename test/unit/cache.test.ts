import { describe, expect, it } from "vitest";
import { Cache } from "#shared/domain/cache.ts";

/** A lookup whose answers the test releases by hand, counting calls. */
function deferredLookup<V>() {
  const waiting: ((value: V | undefined) => void)[] = [];
  const lookup = () => new Promise<V | undefined>((resolve) => waiting.push(resolve));
  return {
    lookup,
    calls: () => waiting.length,
    answer: (index: number, value: V | undefined) => waiting[index]?.(value),
  };
}

/** A lookup that counts its calls and answers `value`. */
function counted<V>(value: (call: number) => V) {
  let calls = 0;
  return { load: async () => value(++calls), calls: () => calls };
}

describe("Cache", () => {
  it("answers from the cache until its time is up, then looks up again", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000 });
    let calls = 0;
    const load = async () => `value ${++calls}`;

    expect(await cache.get("k", 0, load)).toBe("value 1");
    expect(await cache.get("k", 4_999, load)).toBe("value 1");
    expect(await cache.get("k", 5_000, load)).toBe("value 2");
  });

  it("looks up again when the clock went back past an entry's time, rather than trusting it longer", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000 });
    const lookup = counted((call) => `value ${call}`);

    expect(await cache.get("k", 1_000_000, lookup.load)).toBe("value 1");
    // An hour back: the entry would otherwise answer for an hour and five seconds.
    expect(await cache.get("k", 1_000_000 - 3_600_000, lookup.load)).toBe("value 2");
    expect(await cache.get("k", 1_000_000 - 3_600_000 + 4_999, lookup.load)).toBe("value 2");
    expect(lookup.calls()).toBe(2);
  });

  it("never stores a miss, and stores nothing with a time of 0", async () => {
    const misses = new Cache<string>({ ttlMs: 5_000 });
    const off = new Cache<string>({ ttlMs: 0 });
    const miss = counted(() => undefined);
    const hit = counted(() => "v");

    await misses.get("k", 0, miss.load);
    await misses.get("k", 1, miss.load);
    await off.get("k", 0, hit.load);
    await off.get("k", 1, hit.load);

    expect(miss.calls()).toBe(2);
    expect(hit.calls()).toBe(2);
  });

  it("shares one lookup between concurrent gets of a key", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000 });
    const { lookup, calls, answer } = deferredLookup<string>();

    const first = cache.get("k", 0, lookup);
    const second = cache.get("k", 0, lookup);
    answer(0, "v");

    expect(await Promise.all([first, second])).toEqual(["v", "v"]);
    expect(calls()).toBe(1);
  });

  it("does not store what a lookup started before its key's eviction found; other keys' lookups store theirs", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000 });
    const { lookup, answer } = deferredLookup<string>();

    const stale = cache.get("k", 0, lookup);
    const other = cache.get("tenant-b", 0, lookup);
    cache.evict("k");
    answer(0, "old");
    answer(1, "b's state");
    await Promise.all([stale, other]);

    expect(await cache.get("k", 1, async () => "new")).toBe("new");
    expect(await cache.get("tenant-b", 1, async () => "looked up again")).toBe("b's state");
  });

  it("evictWhere also drops the lookups in flight: a request after it looks up afresh, nothing stale is stored", async () => {
    const cache = new Cache<{ permissions: string[] }>({ ttlMs: 5_000 });
    const { lookup, calls, answer } = deferredLookup<{ permissions: string[] }>();

    const before = cache.get("app", 0, lookup); // reads the application while it still has token:read
    cache.evictWhere(() => true); // the permission is removed, and this process evicts
    const after = cache.get("app", 0, lookup);
    answer(0, { permissions: ["token:read"] });
    answer(1, { permissions: [] });

    expect(await before).toEqual({ permissions: ["token:read"] });
    expect(await after).toEqual({ permissions: [] });
    expect(calls()).toBe(2);
    expect(await cache.get("app", 1, async () => ({ permissions: ["other"] }))).toEqual({ permissions: [] });
  });

  it("evictWhere drops only the matching entries", async () => {
    const cache = new Cache<{ app: string }>({ ttlMs: 5_000 });
    await cache.get("a", 0, async () => ({ app: "one" }));
    await cache.get("b", 0, async () => ({ app: "two" }));

    cache.evictWhere((value) => value.app === "one");

    expect(await cache.get("a", 1, async () => ({ app: "reloaded" }))).toEqual({ app: "reloaded" });
    expect(await cache.get("b", 1, async () => ({ app: "reloaded" }))).toEqual({ app: "two" });
  });

  it("follows the usable and storable rules", async () => {
    const cache = new Cache<{ until: number; final: boolean }>({ ttlMs: 5_000 });
    const rules = {
      usable: (value: { until: number }, now: number) => now < value.until,
      storable: (value: { final: boolean }) => value.final,
    };
    const short = counted(() => ({ until: 100, final: true }));
    const pending = counted(() => ({ until: 1_000, final: false }));

    await cache.get("short", 0, short.load, rules);
    await cache.get("short", 99, short.load, rules);
    await cache.get("short", 100, short.load, rules);
    await cache.get("pending", 0, pending.load, rules);
    await cache.get("pending", 1, pending.load, rules);

    expect(short.calls()).toBe(2);
    expect(pending.calls()).toBe(2);
  });
});

describe("Cache bounds", () => {
  it("drops the least recently used value when full, keeping the one just used", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000, maxEntries: 2 });
    let calls = 0;
    const load = async () => `v${++calls}`;
    await cache.get("a", 0, load);
    await cache.get("b", 0, load);
    await cache.get("a", 1, load); // a is now the most recently used
    await cache.get("c", 1, load); // b goes

    expect(await cache.get("a", 2, load)).toBe("v1");
    expect(await cache.get("b", 2, load)).toBe("v4");
  });

  it("answers a value at most maxUses times, the lookup's own answer included", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000, maxUses: 3 });
    let calls = 0;
    const load = async () => `v${++calls}`;

    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await cache.get("k", i, load));

    expect(answers).toEqual(["v1", "v1", "v1", "v2"]);
  });

  it("after an eviction, a new lookup keeps its place while the evicted one finishes", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000 });
    const waiting: ((value: string) => void)[] = [];
    const lookup = () => new Promise<string>((resolve) => waiting.push(resolve));

    const old = cache.get("k", 0, lookup);
    cache.evict("k");
    const fresh = cache.get("k", 0, lookup);
    waiting[0]?.("old");
    await old;
    const joined = cache.get("k", 0, lookup); // shares the fresh lookup, does not start a third
    waiting[1]?.("new");

    expect(await Promise.all([fresh, joined])).toEqual(["new", "new"]);
    expect(waiting).toHaveLength(2);
  });
});

describe("Cache.peek", () => {
  it("answers what get would answer from the cache, as one of its uses, and never looks anything up", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000, maxUses: 3 });
    const { load, calls } = counted((n) => `value ${n}`);
    expect(cache.peek("k", 0)).toBeUndefined();
    expect(await cache.get("k", 0, load)).toBe("value 1"); // use 1
    expect(cache.peek("k", 10)).toBe("value 1"); // use 2
    expect(await cache.get("k", 20, load)).toBe("value 1"); // use 3
    expect(cache.peek("k", 30)).toBeUndefined(); // used up, and dropped
    expect(calls()).toBe(1);
    expect(await cache.get("k", 40, load)).toBe("value 2");
    // Its time, the clock going back, and the usable rule hold for it as for get.
    expect(cache.peek("k", 5_040)).toBeUndefined();
    expect(await cache.get("k", 6_000, load)).toBe("value 3");
    expect(cache.peek("k", 5_999)).toBeUndefined();
    expect(await cache.get("k", 6_000, load)).toBe("value 4");
    expect(cache.peek("k", 6_001, { usable: () => false })).toBeUndefined();
    expect(calls()).toBe(4);
  });

  it("counts as a use for the least-recently-used order", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000, maxEntries: 2 });
    await cache.get("a", 0, async () => "A");
    await cache.get("b", 0, async () => "B");
    expect(cache.peek("a", 1)).toBe("A");
    await cache.get("c", 2, async () => "C"); // drops b, the least recently used
    expect(cache.peek("a", 3)).toBe("A");
    expect(cache.peek("b", 3)).toBeUndefined();
  });

  it("keeps the order right when the value answered is already the most recent, and after evictions", async () => {
    const cache = new Cache<string>({ ttlMs: 5_000, maxEntries: 2 });
    await cache.get("a", 0, async () => "A");
    await cache.get("b", 0, async () => "B");
    expect(cache.peek("b", 1)).toBe("B"); // already the most recent
    expect(cache.peek("a", 1)).toBe("A"); // now a is, b the least recent
    expect(cache.peek("a", 1)).toBe("A");
    await cache.get("c", 2, async () => "C"); // drops b
    expect(cache.peek("b", 3)).toBeUndefined();
    // The most recent evicted, then stored again: it is the most recent once more, and a is dropped next.
    cache.evict("c");
    await cache.get("c", 3, async () => "C2");
    expect(cache.peek("a", 3)).toBe("A");
    expect(cache.peek("c", 3)).toBe("C2");
    await cache.get("d", 4, async () => "D"); // drops a
    expect(cache.peek("a", 4)).toBeUndefined();
    expect(cache.peek("c", 4)).toBe("C2");
    // An expired most recent entry is dropped, not kept in place.
    expect(cache.peek("c", 10_000)).toBeUndefined();
    await cache.get("e", 10_000, async () => "E"); // room for e without dropping d
    expect(cache.peek("d", 4)).toBe("D");
  });
});
