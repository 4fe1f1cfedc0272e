import { hashKey } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import type { ApplicationStore } from "#shared/ports/stores.ts";
import type { Principal } from "./entities.ts";

interface CacheEntry {
  principal: Principal;
  at: number;
}

/**
 * Resolves SVC-API-KEY to a principal. Positive results are cached per process for `cacheSeconds`
 * (default 5 s): a key revoked elsewhere stops working on every warm function within that time, and at
 * once in the process that revoked it (which evicts its entry). Unknown keys are never cached.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly applications: ApplicationStore,
    private readonly rootKey: RootKeyVerifier,
    private readonly clock: Clock,
    private readonly cacheSeconds: number,
  ) {}

  /** The principal behind a key, or undefined for a missing, unknown or revoked key. */
  async authenticate(
    presentedKey: string | undefined,
    options: { rootAllowed: boolean },
  ): Promise<Principal | undefined> {
    if (!presentedKey || presentedKey.length > 512) return undefined;
    const keyHash = hashKey(presentedKey);
    // Only root routes consult the root key, so data-plane functions need no access to where it lives.
    if (options.rootAllowed) return (await this.rootKey.isRootKey(keyHash)) ? { kind: "root" } : undefined;

    const now = this.clock.now().getTime();
    const cached = this.cache.get(keyHash);
    if (cached && now - cached.at < this.cacheSeconds * 1000) return cached.principal;
    this.cache.delete(keyHash);

    const record = await this.applications.findKey(keyHash);
    if (!record) return undefined;
    const application = await this.applications.get(record.tenant_id, record.application_id);
    if (!application) return undefined;
    const principal: Principal = {
      kind: "application",
      tenantId: record.tenant_id,
      keyId: record.key_id,
      application,
    };
    if (this.cacheSeconds > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(keyHash, { principal, at: now });
    }
    return principal;
  }

  /** Drops cached principals of a key (by hash) or of every key of an application. */
  evict(match: { keyHash?: string; applicationId?: string }): void {
    if (match.keyHash) this.cache.delete(match.keyHash);
    if (match.applicationId) {
      for (const [hash, entry] of this.cache) {
        if (entry.principal.kind === "application" && entry.principal.application.id === match.applicationId)
          this.cache.delete(hash);
      }
    }
  }
}
