/**
 * Lookups cached per process for a bounded time: API keys (Authenticator) and proxy keys (CachingProxyStore).
 *
 * - Refills are single-flight: concurrent requests with the same key share one lookup.
 * - An eviction wins over a lookup in flight: a lookup that started before any eviction never stores its
 *   (possibly revoked or changed) answer, so the process that changed something sees the change at once.
 * - Misses (undefined) are never stored: a key created a moment ago works at once.
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  /** Bumped by every eviction; a lookup compares it before storing. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    /** When full the cache is emptied: simple, and a refill is one lookup per key. */
    private readonly maxEntries = 10_000,
  ) {}

  async get(
    key: string,
    now: number,
    load: () => Promise<V | undefined>,
    rules: {
      /** False for an entry that must not be used any more although its time is not up (an expired session). */
      usable?: (value: V, now: number) => boolean;
      /** False for a value that must be looked up again on every use (a session not yet authorized). */
      storable?: (value: V) => boolean;
    } = {},
  ): Promise<V | undefined> {
    const cached = this.entries.get(key);
    if (cached && now - cached.at < this.ttlMs && (rules.usable?.(cached.value, now) ?? true))
      return cached.value;
    this.entries.delete(key);

    let pending = this.loading.get(key);
    if (!pending) {
      const startedAt = this.generation;
      pending = load()
        .then((value) => {
          if (
            value !== undefined &&
            this.ttlMs > 0 &&
            startedAt === this.generation &&
            (rules.storable?.(value) ?? true)
          ) {
            if (this.entries.size >= this.maxEntries) this.entries.clear();
            this.entries.set(key, { value, at: now });
          }
          return value;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Drops one key's entry and any lookup of it in flight. */
  evict(key: string): void {
    this.generation += 1;
    this.loading.delete(key);
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  evictWhere(matches: (value: V) => boolean): void {
    this.generation += 1;
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
