import type { Clock } from "#shared/ports/clock.ts";

/** A clock port the test moves by hand (forward or back), in milliseconds: no test reading it waits. */
export function handClock(
  startMs = Date.parse("2026-01-01T00:00:00Z"),
): Clock & { advance(ms: number): void } {
  let ms = startMs;
  return {
    now: () => new Date(ms),
    advance: (by: number) => {
      ms += by;
    },
  };
}
