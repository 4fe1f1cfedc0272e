import type { Clock } from "#shared/ports/clock.ts";
import type { StoreProbe } from "#shared/ports/store-health.ts";
import { CachedHealth, HEALTH_CACHE_MS } from "./cached-health.ts";

export { HEALTH_CACHE_MS } from "./cached-health.ts";

/** GET /healthz's view of the store: whether it answers, probed at most once per HEALTH_CACHE_MS. */
export class StoreHealth {
  private readonly cached: CachedHealth;

  constructor(probe: StoreProbe, clock: Clock, cacheMs = HEALTH_CACHE_MS) {
    this.cached = new CachedHealth(() => probe.reachable(), clock, cacheMs);
  }

  reachable(): Promise<boolean> {
    return this.cached.healthy();
  }
}
