import { describe, expect, it } from "vitest";
import { CachedHealth } from "#shared/domain/cached-health.ts";
import { handClock } from "#test/support/hand-clock.ts";

describe("CachedHealth", () => {
  it("answers concurrent checks with one probe, and that answer for its time", async () => {
    const clock = handClock();
    let probes = 0;
    let release: (healthy: boolean) => void = () => {};
    const health = new CachedHealth(
      () => {
        probes += 1;
        return new Promise<boolean>((resolve) => {
          release = resolve;
        });
      },
      clock,
      1000,
    );

    const together = [health.healthy(), health.healthy(), health.healthy()];
    release(true);
    expect(await Promise.all(together)).toEqual([true, true, true]);
    clock.advance(999);
    expect(await health.healthy()).toBe(true);
    expect(probes).toBe(1);
  });

  it("counts a probe that fails as not healthy, keeps that answer for its time, then probes again", async () => {
    const clock = handClock();
    let probes = 0;
    const health = new CachedHealth(
      async () => {
        probes += 1;
        if (probes === 1) throw new Error("unreachable");
        return true;
      },
      clock,
      1000,
    );

    expect(await health.healthy()).toBe(false);
    clock.advance(500);
    expect(await health.healthy()).toBe(false);
    expect(probes).toBe(1);
    clock.advance(500);
    expect(await health.healthy()).toBe(true);
    expect(probes).toBe(2);
  });
});
