import { hashKey } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import type { ApplicationStore } from "#shared/ports/stores.ts";
import type { Principal } from "./entities.ts";
import type { SessionStore } from "./sessions.ts";

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
  /** Lookups in flight: concurrent requests with the same key share one (cache refills are single-flight). */
  private readonly loading = new Map<string, Promise<Principal | undefined>>();
  /** Bumped by every eviction: a lookup that started before one never caches its (possibly revoked) answer. */
  private generation = 0;

  constructor(
    private readonly applications: ApplicationStore,
    private readonly sessions: SessionStore,
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
    const sessionOver =
      cached?.principal.kind === "session" && Date.parse(cached.principal.session.expires_at) <= now;
    if (cached && !sessionOver && now - cached.at < this.cacheSeconds * 1000) return cached.principal;
    this.cache.delete(keyHash);

    let pending = this.loading.get(keyHash);
    if (!pending) {
      pending = this.lookup(keyHash, now).finally(() => this.loading.delete(keyHash));
      this.loading.set(keyHash, pending);
    }
    return pending;
  }

  private async lookup(keyHash: string, now: number): Promise<Principal | undefined> {
    const startedAt = this.generation;
    const record = await this.applications.findKey(keyHash);
    if (!record) return undefined;
    const principal = record.session_id
      ? await this.sessionPrincipal(record.tenant_id, record.session_id, now)
      : await this.applicationPrincipal(record.tenant_id, record.application_id, record.key_id);
    if (!principal) return undefined;
    // A session not yet authorized is never cached: its authorization must take effect at once everywhere.
    const cacheable =
      (principal.kind !== "session" || principal.session.authorized) && startedAt === this.generation;
    if (this.cacheSeconds > 0 && cacheable) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(keyHash, { principal, at: now });
    }
    return principal;
  }

  private async applicationPrincipal(
    tenantId: string,
    applicationId: string,
    keyId: string,
  ): Promise<Principal | undefined> {
    const application = await this.applications.get(tenantId, applicationId);
    return application ? { kind: "application", tenantId, keyId, application } : undefined;
  }

  /** A session key: refused from expires_at on, and only as strong as the application behind it. */
  private async sessionPrincipal(
    tenantId: string,
    sessionId: string,
    now: number,
  ): Promise<Principal | undefined> {
    const session = await this.sessions.get(tenantId, sessionId);
    if (!session || Date.parse(session.expires_at) <= now) return undefined;
    const authorized = session.state === "authorized";
    const application = await this.applications.get(
      tenantId,
      (authorized && session.authorized_by) || session.created_by,
    );
    if (!application) return undefined;
    return {
      kind: "session",
      tenantId,
      keyId: session.id,
      application,
      session: {
        id: session.id,
        authorized,
        permissions: session.permissions ?? [],
        rules: session.rules ?? [],
        expires_at: session.expires_at,
      },
    };
  }

  /** Drops cached principals of a key (by hash) or of every key of an application. */
  evict(match: { keyHash?: string; applicationId?: string }): void {
    this.generation += 1;
    if (match.keyHash) this.loading.delete(match.keyHash);
    if (match.keyHash) this.cache.delete(match.keyHash);
    if (match.applicationId) {
      for (const [hash, entry] of this.cache) {
        if (entry.principal.kind !== "root" && entry.principal.application.id === match.applicationId)
          this.cache.delete(hash);
      }
    }
  }
}
