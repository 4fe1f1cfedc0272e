import { Cache } from "#shared/domain/cache.ts";
import { unauthorized } from "#shared/domain/errors.ts";
import { outsideAnyRequest } from "#shared/domain/idempotency-scope.ts";
import type { Clock } from "#shared/ports/clock.ts";
import { CustodyChanged, type DataKeyStore, TenantDeleted } from "#shared/ports/data-key-store.ts";
import type { KeyState } from "#shared/ports/key-versions.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import { answerKeyId, dataKeyId, hmacKeyId, isAnswerKeyId } from "../keys/key-refs.ts";

/** Where the keyring learns the tenant's key versions (key-state.ts: a short cache over the store). */
export interface KeyVersionSource {
  state(tenantId: string): Promise<KeyState>;
  /** The state `state` would answer from its cache now, without a lookup; undefined when it would look it up. */
  cachedState?(tenantId: string): KeyState | undefined;
  /** Called before a new key is generated, so every token under it is counted (key-refs.ts). */
  track(tenantId: string, keyId: string): Promise<void>;
}

/** A key a ciphertext or a lookup names is gone (destroyed, or never made). */
export class MissingKeyError extends Error {
  constructor() {
    super("A data key referenced by a ciphertext is missing");
    this.name = "MissingKeyError";
  }
}

export interface KeyringOptions {
  /** A new data key per tenant every this many days; older keys stay for decryption. */
  rotationDays: number;
  /** A cached plaintext data key is dropped after this long… */
  cacheSeconds: number;
  /** …or after this many uses, whichever comes first. */
  cacheMaxUses: number;
}

export const DEFAULT_KEYRING_OPTIONS: KeyringOptions = {
  rotationDays: 30,
  cacheSeconds: 300,
  cacheMaxUses: 100_000,
};

/** The fingerprint key never rotates: fingerprints must stay comparable across data-key periods. */
export const FINGERPRINT_KEY_ID = "fingerprint";

/** Refuses the keys of a tenant that may no longer use any (a deleted tenant: deleted-tenants.ts). */
export interface TenantGuard {
  assertLive(tenantId: string): Promise<void>;
  /** True when assertLive would pass without a lookup (a live answer cached); false says nothing. */
  knownLive?(tenantId: string): boolean;
}

/**
 * Per-tenant data keys (envelope encryption). A warm process unwraps (or generates) each key at most once per
 * cache period: concurrent requests for the same key share one load, so KMS sees one call per tenant per period.
 */
export class Keyring {
  /** Plaintext data keys by `<tenant id>/<key id>`, for cacheSeconds or cacheMaxUses uses. */
  private readonly cache: Cache<Buffer>;

  constructor(
    private readonly wrapper: KeyWrapper,
    private readonly store: DataKeyStore,
    private readonly clock: Clock,
    private readonly options: KeyringOptions = DEFAULT_KEYRING_OPTIONS,
    private readonly guard?: TenantGuard,
    private readonly versions?: KeyVersionSource,
  ) {
    this.cache = new Cache({ ttlMs: options.cacheSeconds * 1000, maxUses: options.cacheMaxUses });
  }

  /** The data-key version of this moment's rotation period (the version a tenant that never rotated uses). */
  periodVersion(): number {
    return Math.floor(this.clock.now().getTime() / (this.options.rotationDays * 86_400_000));
  }

  /** When rotation period `version` starts (so when the period before it stops being current). */
  periodStart(version: number): Date {
    return new Date(version * this.options.rotationDays * 86_400_000);
  }

  /** The key id new ciphertexts of this moment use: one per rotation period. */
  currentKeyId(): string {
    return dataKeyId(this.periodVersion());
  }

  /** The tenant's key versions (none without a source): from the source's cache when it has them, no promise. */
  private cachedState(tenantId: string): KeyState | undefined {
    return this.versions?.cachedState?.(tenantId);
  }

  /**
   * The tenant's current data-key version: the period's, or a later one a rotation made current, moved on by one
   * for each period begun since that rotation.
   */
  async currentVersion(tenantId: string): Promise<number> {
    const state =
      this.cachedState(tenantId) ?? (this.versions ? await this.versions.state(tenantId) : undefined);
    const period = this.periodVersion();
    const since = state?.rotatedInPeriod === undefined ? 0 : Math.max(0, period - state.rotatedInPeriod);
    return Math.max((state?.dataVersion ?? 0) + since, period);
  }

  async currentKey(tenantId: string): Promise<{ keyId: string; key: Buffer }> {
    const keyId = dataKeyId(await this.currentVersion(tenantId));
    return { keyId, key: await this.key(tenantId, keyId, true) };
  }

  /** HMAC versions of the tenant: the current one (new hashes) and those lookups still try, current first. */
  async hmacVersions(tenantId: string): Promise<{ current: number; live: number[] }> {
    const state =
      this.cachedState(tenantId) ?? (this.versions ? await this.versions.state(tenantId) : undefined);
    const current = state?.hmacVersion ?? 1;
    const older = (state?.hmacLive ?? []).filter((v) => v !== current).sort((a, b) => b - a);
    return { current, live: [current, ...older] };
  }

  /**
   * The HMAC key of a version: made on first use while the version is live, else it must exist
   * (MissingKeyError). Live, not only current: a caller that read the version as current may ask for its key
   * after a rotation made a newer one current (rotation under traffic); a write under it is then counted under
   * that version, and refused (409) if the version is retired meanwhile (key-counters.ts).
   * `existingOnly`: never made (a lookup under an earlier version: no token is hashed under a key not made).
   */
  async hmacKey(
    tenantId: string,
    version: number,
    options: { existingOnly?: boolean } = {},
  ): Promise<Buffer> {
    if (options.existingOnly) return this.key(tenantId, hmacKeyId(version), false);
    const { live } = await this.hmacVersions(tenantId);
    return this.key(tenantId, hmacKeyId(version), live.includes(version));
  }

  /** An existing key, for decryption. */
  async keyFor(tenantId: string, keyId: string): Promise<Buffer> {
    return this.key(tenantId, keyId, false);
  }

  async fingerprintKey(tenantId: string): Promise<Buffer> {
    return this.key(tenantId, FINGERPRINT_KEY_ID, true);
  }

  /**
   * The tenant's current answer key (idempotent answers: key-refs.ts, answer keys): beside its current data
   * version, so a rotation rotates it too; never counted (no token needs it).
   */
  async currentAnswerKey(tenantId: string): Promise<{ keyId: string; key: Buffer }> {
    const keyId = answerKeyId(dataKeyId(await this.currentVersion(tenantId)));
    return { keyId, key: await this.key(tenantId, keyId, true) };
  }

  /** The answer keys' HMAC key (request signatures of idempotent requests): never rotates, as fingerprintKey. */
  async answerFingerprintKey(tenantId: string): Promise<Buffer> {
    return this.key(tenantId, answerKeyId(FINGERPRINT_KEY_ID), true);
  }

  /**
   * An existing key when the keyring can answer at once: the tenant known live, then the key cached. Else
   * undefined, and `keyFor` (which loads it, or refuses) is the answer. No promise: every read asks.
   */
  cachedKey(tenantId: string, keyId: string): Buffer | undefined {
    if (this.guard && !this.guard.knownLive?.(tenantId)) return undefined;
    return this.cache.peek(`${tenantId}/${keyId}`, this.clock.now().getTime());
  }

  private async key(tenantId: string, keyId: string, createIfMissing: boolean): Promise<Buffer> {
    // The common case without a promise per step.
    const cached = this.cachedKey(tenantId, keyId);
    if (cached) return cached;
    // Before the cache too: a key cached before its tenant was deleted is never served after (bounded by the
    // guard's own cache, SVC_AUTH_CACHE_SECONDS, in processes that did not delete it).
    await this.guard?.assertLive(tenantId);
    const now = this.clock.now().getTime();
    for (let attempt = 1; ; attempt++) {
      try {
        const key = await this.cache.get(`${tenantId}/${keyId}`, now, () =>
          this.load(tenantId, keyId, createIfMissing),
        );
        // load() answers a key or throws: the cache answers undefined only for a lookup that found nothing.
        if (!key) throw new Error("A data key could not be loaded");
        return key;
      } catch (error) {
        // A caller that may make the key joined a load in flight that may not (an earlier-version lookup): its
        // miss is not this caller's answer, so it loads again (a miss is never cached).
        if (!createIfMissing || !(error instanceof MissingKeyError) || attempt >= 3) throw error;
      }
    }
  }

  private async load(tenantId: string, keyId: string, createIfMissing: boolean): Promise<Buffer> {
    const context = { tenant_id: tenantId, key_id: keyId };
    const stored = await this.store.get(tenantId, keyId);
    if (stored) return this.wrapper.unwrap(stored, context);
    if (!createIfMissing) throw new MissingKeyError();
    // Answer keys are not counted: no token needs them (they are destroyed with the tenant).
    if (!isAnswerKeyId(keyId)) await this.versions?.track(tenantId, keyId);
    for (let attempt = 1; ; attempt++) {
      const generated = await this.wrapper.generateDataKey(context);
      try {
        // Not the request's effect (the key serves every request of the tenant): outside its idempotency claim.
        const winner = await outsideAnyRequest(() =>
          this.store.putIfAbsent(tenantId, keyId, generated.wrapped, generated.custody),
        );
        // Another process stored its key first: use that one (costs one more unwrap, once).
        return winner.equals(generated.wrapped) ? generated.plaintext : this.wrapper.unwrap(winner, context);
      } catch (error) {
        // The tenant was deleted since the live check (the shred destroyed its keys): nothing stored, as a 401.
        if (error instanceof TenantDeleted) throw unauthorized();
        // The tenant brought (or changed) its own key meanwhile: made again under the key it has now.
        if (!(error instanceof CustodyChanged) || attempt >= 3) throw error;
      }
    }
  }
}
