/**
 * The one cache of looked-up values per process: API keys and configured applications (Authenticator), proxy
 * keys (CachingProxyStore), data keys (Keyring), key states (KeyStateCache), deleted tenants (DeletedTenants),
 * held fingerprint claims (DynamoTokenStore), the root key's parameter (SsmRootKeyVerifier) and the readiness
 * probes (CachedHealth).
 *
 * - Refills are single-flight: concurrent requests with the same key share one lookup.
 * - An eviction wins over a lookup in flight: a lookup of an evicted key (or, for `evictWhere`, of any key:
 *   what it will find is not known yet) never stores its (possibly revoked or changed) answer, and a request
 *   after the eviction starts a lookup of its own instead of joining it, so the process that changed something
 *   sees the change at once. Other keys' lookups are not touched by `evict`.
 * - Misses (undefined) are never stored: a key created a moment ago works at once.
 * - Bounded: at most `maxEntries` values (the least recently used goes first), each for `ttlMs` and, with
 *   `maxUses`, for that many answers.
 * Time is the caller's `now` (the clock port's), so tests move it by hand. An entry stamped after `now` (a clock
 * that went back) is looked up again, so a clock jump cannot make an answer outlive its time.
 */
export interface CacheOptions {
  /** How long a stored value answers; 0 stores nothing. */
  ttlMs: number;
  /** Values kept; beyond this the least recently used is dropped. Default 10 000. */
  maxEntries?: number;
  /** Answers a stored value gives (the lookup's own included) before it is looked up again. Default: no limit. */
  maxUses?: number;
}

export interface CacheRules<V> {
  /** False for an entry that must not be used any more although its time is not up (an expired session). */
  usable?: (value: V, now: number) => boolean;
  /** False for a value that must be looked up again on every use (a session not yet authorized). */
  storable?: (value: V) => boolean;
}

interface Entry<V> {
  value: V;
  at: number;
  uses: number;
}

export class Cache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /**
   * The key last stored or answered, so last in `entries`' order: answered again, it stays where it is. Moving an
   * entry to the end is a delete and a set, and a Map rehashes itself after enough of them: for the one tenant or
   * key a warm instance mostly serves, that was every request's work, three caches a read.
   */
  private newest: string | undefined;
  /** Lookups in flight by key: a lookup stores its answer only while it still holds its key's slot here. */
  private readonly loading = new Map<string, Promise<V | undefined>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly maxUses: number;

  constructor(options: CacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxUses = options.maxUses ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The stored value when it may answer now, counted as one of its uses, else undefined: `get`'s answer from the
   * cache, without a promise (the keyring asks several times a request: crypto/keyring.ts).
   */
  peek(key: string, now: number, rules: CacheRules<V> = {}): V | undefined {
    const cached = this.entries.get(key);
    if (!cached) return undefined;
    if (
      // An entry stamped after `now` (the clock went back) is not trusted for longer than its time.
      !(
        now >= cached.at &&
        now - cached.at < this.ttlMs &&
        cached.uses < this.maxUses &&
        (rules.usable?.(cached.value, now) ?? true)
      )
    ) {
      this.drop(key);
      return undefined;
    }
    cached.uses += 1;
    // The Map's order is least recently used first: a value answered moves to the end.
    if (key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      this.newest = key;
    }
    return cached.value;
  }

  async get(
    key: string,
    now: number,
    load: () => Promise<V | undefined>,
    rules: CacheRules<V> = {},
  ): Promise<V | undefined> {
    const cached = this.peek(key, now, rules);
    if (cached !== undefined) return cached;
    const inFlight = this.loading.get(key);
    if (inFlight) return inFlight;
    const holdsSlot = () => this.loading.get(key) === pending;
    const pending: Promise<V | undefined> = this.refill(key, now, load, rules, holdsSlot).finally(() => {
      // An eviction meanwhile may have let a newer lookup take the slot: leave that one.
      if (holdsSlot()) this.loading.delete(key);
    });
    this.loading.set(key, pending);
    return pending;
  }

  /** Drops one key's entry and any lookup of it in flight. */
  evict(key: string): void {
    this.loading.delete(key);
    this.drop(key);
  }

  private drop(key: string): void {
    this.entries.delete(key);
    if (key === this.newest) this.newest = undefined;
  }

  /** Drops every entry whose value matches, and every lookup in flight (their answers are not known yet). */
  evictWhere(matches: (value: V) => boolean): void {
    this.loading.clear();
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.drop(key);
  }

  private async refill(
    key: string,
    now: number,
    load: () => Promise<V | undefined>,
    rules: CacheRules<V>,
    holdsSlot: () => boolean,
  ): Promise<V | undefined> {
    const value = await load();
    const store = value !== undefined && this.ttlMs > 0 && holdsSlot();
    if (store && (rules.storable?.(value) ?? true)) {
      // Deleted first, so that it goes to the end even if an entry of the key is still there.
      this.entries.delete(key);
      this.entries.set(key, { value, at: now, uses: 1 });
      this.newest = key;
      if (this.entries.size > this.maxEntries) this.drop(this.entries.keys().next().value as string);
    }
    return value;
  }
}
