import { unauthorized } from "#shared/domain/errors.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { TenantDeletionStore } from "#shared/ports/tenant-deletion.ts";
import { Cache } from "./cache.ts";

/**
 * Which tenants are deleted, as every request and every data key sees it. A deletion is known at once in the
 * process that made it and within `cacheSeconds` (SVC_AUTH_CACHE_SECONDS, as a revoked key) in every other: a
 * live answer is cached that long, a deleted one for good. One lookup per tenant per period for the keyring (no
 * cached data key outlives the deletion) and proxies; the auth path reads the store on each key lookup instead
 * (`isDeletedNow`), since what it caches on that answer lives another period.
 */
export class DeletedTenants {
  private readonly deleted = new Set<string>();
  private readonly live: Cache<{ deleted: boolean }>;

  constructor(
    private readonly store: Pick<TenantDeletionStore, "isDeleted">,
    private readonly clock: Clock,
    cacheSeconds: number,
  ) {
    this.live = new Cache({ ttlMs: cacheSeconds * 1000 });
  }

  /** Known deleted in this process (no lookup): what a cached principal is checked against on every use. */
  knownDeleted(tenantId: string): boolean {
    return this.deleted.has(tenantId);
  }

  /** Known live without a lookup: a live answer still cached (what assertLive would take without asking). */
  knownLive(tenantId: string): boolean {
    if (this.deleted.has(tenantId)) return false;
    return this.live.peek(tenantId, this.clock.now().getTime())?.deleted === false;
  }

  async isDeleted(tenantId: string): Promise<boolean> {
    if (this.deleted.has(tenantId)) return true;
    const state = await this.live.get(tenantId, this.clock.now().getTime(), async () => ({
      deleted: await this.store.isDeleted(tenantId),
    }));
    if (state?.deleted) this.markDeleted(tenantId);
    return state?.deleted ?? false;
  }

  /**
   * Read from the store, not from the live answers' cache: for what is cached on the answer's strength (a key's
   * principal), so that a live answer already almost `cacheSeconds` old does not keep a deleted tenant's key
   * working for another `cacheSeconds`.
   */
  async isDeletedNow(tenantId: string): Promise<boolean> {
    if (this.deleted.has(tenantId)) return true;
    const deleted = await this.store.isDeleted(tenantId);
    if (deleted) this.markDeleted(tenantId);
    return deleted;
  }

  /** 401 for anything of a deleted tenant: its keys, sessions, proxies and data keys all end with it. */
  async assertLive(tenantId: string): Promise<void> {
    if (await this.isDeleted(tenantId)) throw unauthorized();
  }

  markDeleted(tenantId: string): void {
    this.deleted.add(tenantId);
    this.live.evict(tenantId);
  }
}
