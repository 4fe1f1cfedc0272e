import type { LogEntry } from "#shared/domain/audit.ts";
import { Cache } from "#shared/domain/cache.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { ProxySeals, ProxyStore } from "#shared/ports/proxy-store.ts";
import type { ProxyToStore, StoredProxy } from "./proxy.ts";

/**
 * The proxy store with `findByKey` cached per process for the API-key cache's time (SVC_AUTH_CACHE_SECONDS,
 * 5 s by default): a warm proxy invocation then reads only its tokens. A proxy changed or deleted elsewhere
 * takes effect on every warm function within that time, like a revoked API key, and at once in the process
 * that changed it (it evicts the entry; locally the whole service is that one process). It holds proxies as stored,
 * their configuration sealed: the invocation opens it when a transform reads it (invoke.ts).
 */
export class CachingProxyStore implements ProxyStore {
  private readonly byKey: Cache<StoredProxy>;

  constructor(
    private readonly inner: ProxyStore,
    private readonly clock: Clock,
    cacheSeconds: number,
  ) {
    this.byKey = new Cache({ ttlMs: cacheSeconds * 1000 });
  }

  findByKey(keyHash: string): Promise<StoredProxy | undefined> {
    return this.byKey.get(keyHash, this.clock.now().getTime(), () => this.inner.findByKey(keyHash));
  }

  create(proxy: ProxyToStore, audit: LogEntry): Promise<void> {
    return this.inner.create(proxy, audit);
  }

  get(tenantId: string, id: string): Promise<StoredProxy | undefined> {
    return this.inner.get(tenantId, id);
  }

  list(tenantId: string): Promise<StoredProxy[]> {
    return this.inner.list(tenantId);
  }

  async replace(proxy: ProxyToStore, audit: LogEntry): Promise<boolean> {
    try {
      return await this.inner.replace(proxy, audit);
    } finally {
      this.byKey.evict(proxy.key_hash);
    }
  }

  async reseal(proxy: StoredProxy, next: ProxySeals, audit: LogEntry): Promise<boolean> {
    try {
      return await this.inner.reseal(proxy, next, audit);
    } finally {
      this.byKey.evict(proxy.key_hash);
    }
  }

  async rotateKey(
    proxy: StoredProxy,
    next: ProxySeals & Pick<StoredProxy, "key_hash">,
    audit: LogEntry,
  ): Promise<boolean> {
    try {
      return await this.inner.rotateKey(proxy, next, audit);
    } finally {
      this.byKey.evict(proxy.key_hash);
    }
  }

  async delete(proxy: StoredProxy, audit: LogEntry): Promise<boolean> {
    try {
      return await this.inner.delete(proxy, audit);
    } finally {
      this.byKey.evict(proxy.key_hash);
    }
  }
}
