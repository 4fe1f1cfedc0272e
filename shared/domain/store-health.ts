import type { Clock } from "#shared/ports/clock.ts";
import type { StoreProbe } from "#shared/ports/store-health.ts";

/** How long one probe's answer stands: a load balancer polling every second costs one store call a second. */
export const HEALTH_CACHE_MS = 1000;

/**
 * GET /healthz's view of the store: the last probe's answer for HEALTH_CACHE_MS (by the clock port), one probe
 * at a time however many health checks arrive together.
 */
export class StoreHealth {
  private last: { at: number; reachable: boolean } | undefined;
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly probe: StoreProbe,
    private readonly clock: Clock,
    private readonly cacheMs = HEALTH_CACHE_MS,
  ) {}

  async reachable(): Promise<boolean> {
    const now = this.clock.now().getTime();
    if (this.last && now - this.last.at >= 0 && now - this.last.at < this.cacheMs) return this.last.reachable;
    this.pending ??= this.probe
      .reachable()
      .catch(() => false)
      .then((reachable) => {
        this.last = { at: this.clock.now().getTime(), reachable };
        this.pending = undefined;
        return reachable;
      });
    return this.pending;
  }
}
