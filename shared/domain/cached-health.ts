import type { Clock } from "#shared/ports/clock.ts";
import { Cache } from "./cache.ts";

/** How long one probe's answer stands: a load balancer polling every second costs one probe a second. */
export const HEALTH_CACHE_MS = 1000;

/**
 * One part of GET /healthz's readiness: the last probe's answer for `cacheMs` (by the clock port), one probe at
 * a time however many health checks arrive together (the process's one cache, shared/domain/cache.ts). A probe
 * that rejects counts as not healthy, and that answer stands as long as a healthy one.
 */
export class CachedHealth {
  private readonly cache: Cache<{ healthy: boolean }>;

  constructor(
    private readonly probe: () => Promise<boolean>,
    private readonly clock: Clock,
    cacheMs = HEALTH_CACHE_MS,
  ) {
    this.cache = new Cache({ ttlMs: cacheMs, maxEntries: 1 });
  }

  async healthy(): Promise<boolean> {
    const answer = await this.cache.get("probe", this.clock.now().getTime(), async () => ({
      healthy: await this.probe().catch(() => false),
    }));
    return answer?.healthy ?? false;
  }
}
