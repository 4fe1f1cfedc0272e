import { hashKey } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import type { SessionStore } from "#shared/ports/session-store.ts";
import type { ApplicationReader } from "#shared/ports/stores.ts";
import { Cache } from "./cache.ts";
import type { DeletedTenants } from "./deleted-tenants.ts";
import type { Application, ApplicationKey, Principal } from "./entities.ts";

/** How many applications deep a key's minting chain is followed (created_through, minted_through). */
const MAX_MINTING_CHAIN = 16;

/** The non-member applications a key was minted through, each once: its minted_through, then its minted_chain. */
const mintingChainOfKey = (key: Pick<ApplicationKey, "minted_through" | "minted_chain">): string[] =>
  key.minted_through ? [...new Set([key.minted_through, ...(key.minted_chain ?? [])])] : [];

/**
 * Resolves SVC-API-KEY to a principal. Positive results are cached per process for `cacheSeconds`
 * (default 5 s, cache.ts): a key revoked elsewhere stops working on every warm function within that time, and at
 * once in the process that revoked it (which evicts its entry). Unknown keys are never cached.
 */
export class Authenticator {
  private readonly cache: Cache<Principal>;
  /** Applications configured on proxies and reactors, by `<tenant id>/<application id>`. */
  private readonly configured: Cache<Application>;

  constructor(
    private readonly applications: ApplicationReader,
    private readonly sessions: SessionStore,
    private readonly rootKey: RootKeyVerifier,
    private readonly clock: Clock,
    cacheSeconds: number,
    /**
     * Every key and session of a deleted tenant answers 401: read from the store on each lookup (a principal is
     * then cached at most `cacheSeconds` past that read), checked against this process's own knowledge on each
     * cached use.
     */
    private readonly deletedTenants?: Pick<DeletedTenants, "isDeletedNow" | "knownDeleted">,
  ) {
    this.cache = new Cache({ ttlMs: cacheSeconds * 1000 });
    this.configured = new Cache({ ttlMs: cacheSeconds * 1000 });
  }

  /**
   * An application of the tenant, cached like the applications behind keys: what a proxy or reactor with a
   * configured application acts as. A change takes effect as a key's does (evict below).
   */
  application(tenantId: string, applicationId: string): Promise<Application | undefined> {
    return this.configured.get(
      `${tenantId}/${applicationId}`,
      this.clock.now().getTime(),
      async () => {
        if (await this.deletedTenants?.isDeletedNow(tenantId)) return undefined;
        const application = await this.applications.getActive(tenantId, applicationId);
        // A member's own application acts only while the member does, as its keys (membersActive).
        return application && (await this.membersActive(tenantId, [application])) ? application : undefined;
      },
      { usable: () => !this.deletedTenants?.knownDeleted(tenantId) },
    );
  }

  /**
   * The tenant principal behind a key when the cache answers it now (what `authenticate` without `fresh` would
   * answer from it), else undefined: then `authenticate` is the answer. No promise: nearly every request is this.
   */
  cached(presentedKey: string | undefined): Principal | undefined {
    if (!presentedKey || presentedKey.length > 512) return undefined;
    return this.cache.peek(hashKey(presentedKey), this.clock.now().getTime(), this.cachedPrincipals);
  }

  /** The principal behind a key, or undefined for a missing, unknown or revoked key. */
  async authenticate(
    presentedKey: string | undefined,
    options: {
      rootAllowed: boolean;
      /**
       * Looked up in the store, never answered from the cache (the answer is cached afresh): for management
       * writes, whose checks against the caller's own grant (grant-ceiling.ts) leave lasting effects. A principal
       * cached before its application was narrowed or its key revoked on another instance could otherwise, within
       * the cache's time, put its old grant back or create and mint copies of it, for good.
       */
      fresh?: boolean;
    },
  ): Promise<Principal | undefined> {
    if (!presentedKey || presentedKey.length > 512) return undefined;
    const keyHash = hashKey(presentedKey);
    // Only root routes consult the root key, so data-plane functions need no access to where it lives.
    if (options.rootAllowed) return (await this.rootKey.isRootKey(keyHash)) ? { kind: "root" } : undefined;
    if (options.fresh) this.cache.evict(keyHash);
    return this.byKeyHash(keyHash);
  }

  /**
   * The application a key acts for, while the key would authenticate now (read afresh, never from the cache): its
   * application and listing there, no deletion of either begun, the members behind them active, the applications
   * it was minted through still there. A transaction's hold on a token stands only while the key that opened it
   * does (transactions.ts): it was asked only whether the key and the application existed (review s54).
   */
  async keyHolder(tenantId: string, applicationId: string, keyId: string): Promise<Application | undefined> {
    if (await this.deletedTenants?.isDeletedNow(tenantId)) return undefined;
    const principal = await this.applicationPrincipal(tenantId, applicationId, keyId);
    return principal?.kind === "application" ? principal.application : undefined;
  }

  /**
   * The tenant principal behind a key's SHA-256 (never the root key): what the Elements frame page is built
   * for (its CSP names the application's allowed_origins). Holding a hash grants nothing else.
   */
  async byKeyHash(keyHash: string): Promise<Principal | undefined> {
    const now = this.clock.now().getTime();
    return this.cache.get(keyHash, now, () => this.lookup(keyHash, now), this.cachedPrincipals);
  }

  /** Which cached principals may answer, and which may be kept (built once: every request passes here). */
  private readonly cachedPrincipals = {
    usable: (principal: Principal, at: number) =>
      (principal.kind === "root" || !this.deletedTenants?.knownDeleted(principal.tenantId)) &&
      (principal.kind !== "session" || Date.parse(principal.session.expires_at) > at),
    // A session not yet authorized is never cached: its authorization must take effect at once everywhere.
    storable: (principal: Principal) => principal.kind !== "session" || principal.session.authorized,
  };

  private async lookup(keyHash: string, now: number): Promise<Principal | undefined> {
    const record = await this.applications.findKey(keyHash);
    if (!record || (await this.deletedTenants?.isDeletedNow(record.tenant_id))) return undefined;
    return record.session_id
      ? this.sessionPrincipal(record.tenant_id, record.session_id, now)
      : this.applicationPrincipal(record.tenant_id, record.application_id, record.key_id);
  }

  /**
   * An application key: refused once its application or its listing is gone, or the member it was minted through
   * (a key minted while that member was being deleted outlives the deletion's list of keys to remove).
   */
  private async applicationPrincipal(
    tenantId: string,
    applicationId: string,
    keyId: string,
  ): Promise<Principal | undefined> {
    const [application, key] = await Promise.all([
      this.applications.getActive(tenantId, applicationId),
      this.liveKey(tenantId, applicationId, keyId),
    ]);
    if (!application || !key || !(await this.membersActive(tenantId, [application], key.minted_by)))
      return undefined;
    const mintedThrough = mintingChainOfKey(key);
    return {
      kind: "application",
      tenantId,
      keyId,
      application,
      ...(mintedThrough.length ? { mintedThrough } : {}),
      ...(key.minted_by ? { mintedBy: key.minted_by } : {}),
    };
  }

  /**
   * Whether the members behind `applications` (a member's own applications: its management key, a session it
   * created or authorized) still are, with no deletion of them begun; `checked`: a member already asked about.
   * Before, only a key minted through a member was asked about, so a member left marked by a deletion that failed
   * part-way kept its own key, and invited a new admin with it (review s53).
   */
  private async membersActive(
    tenantId: string,
    applications: readonly (Application | undefined)[],
    checked?: string,
  ): Promise<boolean> {
    const members = new Set<string>();
    for (const application of applications)
      if (application?.member_id !== undefined && application.member_id !== checked)
        members.add(application.member_id);
    const active = await Promise.all(
      [...members].map((memberId) => this.applications.memberActive(tenantId, memberId)),
    );
    return active.every(Boolean);
  }

  /**
   * A key of an application, while it may act: listed, and the member it was minted through (if any) still a
   * member. The one check of a key, whether it is used itself or through a session it authorized.
   */
  private async liveKey(tenantId: string, applicationId: string, keyId: string) {
    const key = await this.applications.getKey(tenantId, applicationId, keyId);
    if (!key || (key.minted_by && !(await this.applications.memberActive(tenantId, key.minted_by))))
      return undefined;
    const through = mintingChainOfKey(key);
    if (through.length > MAX_MINTING_CHAIN) return undefined;
    // Applications met once are not read again: the chains share their ancestors (16 × 16 reads at worst before).
    const checked = new Set<string>();
    for (const applicationId of through)
      if (!(await this.mintingChainExists(tenantId, applicationId, checked))) return undefined;
    return key;
  }

  /**
   * Whether the non-member application a key was minted through still exists, and the one that application was
   * created through, and so on: deleting a leaked key's application revokes everything minted with it, however
   * many applications deep. A chain longer than any a tenant builds by hand is refused rather than walked.
   */
  private async mintingChainExists(
    tenantId: string,
    applicationId: string,
    checked: Set<string>,
  ): Promise<boolean> {
    let next: string | undefined = applicationId;
    for (let depth = 0; next !== undefined && !checked.has(next); depth++) {
      if (depth >= MAX_MINTING_CHAIN) return false;
      const application: Application | undefined = await this.applications.getActive(tenantId, next);
      if (!application) return false;
      checked.add(next);
      next = application.created_through;
    }
    return true;
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
    const applicationId = (authorized && session.authorized_by) || session.created_by;
    const authorizedKeyId = authorized ? session.authorized_key_id : undefined;
    // Only as lasting as the key that authorized it: a revoked (stolen) key's sessions end with it.
    const [application, authorizingKey, creator] = await Promise.all([
      this.applications.getActive(tenantId, applicationId),
      authorizedKeyId ? this.liveKey(tenantId, applicationId, authorizedKeyId) : undefined,
      applicationId === session.created_by
        ? undefined
        : this.applications.getActive(tenantId, session.created_by),
    ]);
    if (!application || (authorizedKeyId && !authorizingKey)) return undefined;
    // Only as lasting as the application that created it (a retired checkout's sessions end with it: they read
    // on from anywhere without an Origin, front-end review); its origins bound where the session is used from.
    const created = applicationId === session.created_by ? application : creator;
    if (!created || !(await this.membersActive(tenantId, [application, created], authorizingKey?.minted_by)))
      return undefined;
    const origins = created.allowed_origins ?? [];
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
        ...(session.service === true ? { service: true as const } : {}),
      },
      ...(authorizedKeyId ? { authorizedKeyId } : {}),
      creator: { id: session.created_by, allowed_origins: origins },
    };
  }

  /**
   * Drops cached principals of a key (by hash), of the sessions a key authorized (by key id), of every key
   * of an application, or of every key of a tenant (an application's deletion: the keys minted through it, at any
   * depth, are not known from their principals).
   */
  evict(match: { keyHash?: string; keyId?: string; applicationId?: string; tenantId?: string }): void {
    if (match.tenantId)
      this.cache.evictWhere(
        (principal) => principal.kind !== "root" && principal.tenantId === match.tenantId,
      );
    if (match.keyHash) this.cache.evict(match.keyHash);
    if (match.keyId)
      this.cache.evictWhere(
        (principal) => principal.kind === "session" && principal.authorizedKeyId === match.keyId,
      );
    if (match.applicationId) {
      this.cache.evictWhere(
        (principal) =>
          principal.kind !== "root" &&
          (principal.application.id === match.applicationId ||
            (principal.kind === "session" && principal.creator.id === match.applicationId)),
      );
      this.configured.evictWhere((application) => application.id === match.applicationId);
    }
  }
}
