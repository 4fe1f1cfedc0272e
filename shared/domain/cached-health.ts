import type { Clock } from "#shared/ports/clock.ts";

/** How long one probe's answer stands: a load balancer polling every second costs one probe a second. */
export const HEALTH_CACHE_MS = 1000;

/**
 * One part of GET /healthz's readiness: the last probe's answer for `cacheMs` (by the clock port), one probe at
 * a time however many health checks arrive together. A probe that rejects counts as not healthy.
 */
export class CachedHealth {
  private last: { at: number; healthy: boolean } | undefined;
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly probe: () => Promise<boolean>,
    private readonly clock: Clock,
    private readonly cacheMs = HEALTH_CACHE_MS,
  ) {}

  async healthy(): Promise<boolean> {
    const now = this.clock.now().getTime();
    if (this.last && now - this.last.at >= 0 && now - this.last.at < this.cacheMs) return this.last.healthy;
    this.pending ??= this.probe()
      .catch(() => false)
      .then((healthy) => {
        this.last = { at: this.clock.now().getTime(), healthy };
        this.pending = undefined;
        return healthy;
      });
    return this.pending;
  }
}
