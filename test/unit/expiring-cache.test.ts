import { describe, expect, it } from "vitest";
import { ExpiringCache } from "#shared/domain/expiring-cache.ts";

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

describe("ExpiringCache", () => {
  it("answers from the cache until its time is up, then looks up again", async () => {
    const cache = new ExpiringCache<string>(5_000);
    let calls = 0;
    const load = async () => `value ${++calls}`;

    expect(await cache.get("k", 0, load)).toBe("value 1");
    expect(await cache.get("k", 4_999, load)).toBe("value 1");
    expect(await cache.get("k", 5_000, load)).toBe("value 2");
  });

  it("never stores a miss, and stores nothing with a time of 0", async () => {
    const misses = new ExpiringCache<string>(5_000);
    const off = new ExpiringCache<string>(0);
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
    const cache = new ExpiringCache<string>(5_000);
    const { lookup, calls, answer } = deferredLookup<string>();

    const first = cache.get("k", 0, lookup);
    const second = cache.get("k", 0, lookup);
    answer(0, "v");

    expect(await Promise.all([first, second])).toEqual(["v", "v"]);
    expect(calls()).toBe(1);
  });

  it("does not store what a lookup started before an eviction found", async () => {
    const cache = new ExpiringCache<string>(5_000);
    const { lookup, answer } = deferredLookup<string>();

    const stale = cache.get("k", 0, lookup);
    cache.evict("k");
    answer(0, "old");
    await stale;

    expect(await cache.get("k", 1, async () => "new")).toBe("new");
  });

  it("evictWhere drops only the matching entries", async () => {
    const cache = new ExpiringCache<{ app: string }>(5_000);
    await cache.get("a", 0, async () => ({ app: "one" }));
    await cache.get("b", 0, async () => ({ app: "two" }));

    cache.evictWhere((value) => value.app === "one");

    expect(await cache.get("a", 1, async () => ({ app: "reloaded" }))).toEqual({ app: "reloaded" });
    expect(await cache.get("b", 1, async () => ({ app: "reloaded" }))).toEqual({ app: "two" });
  });

  it("follows the usable and storable rules", async () => {
    const cache = new ExpiringCache<{ until: number; final: boolean }>(5_000);
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

  it("starts over when full rather than growing", async () => {
    const cache = new ExpiringCache<string>(5_000, 2);
    let calls = 0;
    const load = async () => `v${++calls}`;
    await cache.get("a", 0, load);
    await cache.get("b", 0, load);
    await cache.get("c", 0, load);

    expect(await cache.get("c", 1, load)).toBe("v3");
    expect(await cache.get("a", 1, load)).toBe("v4");
  });
});
