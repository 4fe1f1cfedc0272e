import type { Clock } from "#shared/ports/clock.ts";

export const systemClock: Clock = { now: () => new Date() };

/** Local-mode clock that can only move forward (SVC_TEST_CLOCK=1, POST /_test/clock). */
export class TestClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(seconds: number): Date {
    this.offsetMs += seconds * 1000;
    return this.now();
  }
}
