import type { TokenRef } from "#shared/domain/access-rules.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { validationError } from "#shared/domain/errors.ts";
import { hashVersionOf } from "#shared/domain/keys/key-refs.ts";
import {
  carriedCvcEnd,
  listingPosition,
  type StoredToken,
  type TokenHold,
  type TokenListFilter,
  type TransactionContext,
} from "#shared/domain/tokens/token.ts";
import { isEmpty, isVisible } from "#shared/domain/tokens/visibility.ts";
import {
  type CreateManyOutcome,
  type PageRequest,
  SEARCH_SCAN_ITEMS,
  type StagedCreate,
  type StageOutcome,
  type StorePage,
  type TokenAsRead,
  type TokenCreateOutcome,
  type TokenStore,
  type WriteOutcome,
} from "#shared/ports/stores.ts";
import type { MemoryAuditLogStore } from "./audit-log-store.ts";
import { decodePosition, encodePosition } from "./positions.ts";

/**
 * Tokens in memory, for use-case tests that need no DynamoDB Local. It keeps what the DynamoDB store promises
 * (test/contract/token-store.ts runs against both): ids written once, version-guarded replaces, fingerprint
 * claims that deduplicate and are released by deletes, all-or-nothing batch creates, newest-first listing with
 * totals, offset and cursor pages, expired and pending tokens left out of lists, and the blind-index lookup.
 * Transactions (a create, replace or delete joining one, staged creates) are not kept: those paths throw.
 */
export class MemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, StoredToken>();
  /** Fingerprint claims: `tenant\ntype\nfingerprint` → the token id holding it. */
  private readonly claims = new Map<string, string>();
  /** Lookup items: `tenant\nv<version>\nhash` → token ids. */
  private readonly search = new Map<string, Set<string>>();

  constructor(private readonly auditLog: MemoryAuditLogStore) {}

  async create(
    token: StoredToken,
    options: { deduplicate: boolean; now: Date; transaction?: TransactionContext },
    audit: LogEntry,
  ): Promise<TokenCreateOutcome> {
    if (options.transaction) throw unsupported();
    if (this.tokens.has(keyOf(token))) return { outcome: "id-taken" };
    if (options.deduplicate) {
      const owner = this.liveClaimOwner(token, options.now);
      if (owner) return { outcome: "duplicate", tokenId: owner };
    }
    this.write([token], [audit], options.deduplicate ? [token] : []);
    // Any other create claims afterwards, only if nobody has (best effort, as in DynamoDB).
    if (!options.deduplicate) this.claimIfUnclaimed(token);
    return { outcome: "created" };
  }

  async stageCreates(): Promise<StageOutcome> {
    throw unsupported();
  }

  async createAtOnce(
    entries: StagedCreate[],
    skip: Record<number, string>,
    now: Date,
  ): Promise<CreateManyOutcome> {
    const written = entries.filter((_, i) => skip[i] === undefined);
    const taken = entries.findIndex((e, i) => skip[i] === undefined && this.tokens.has(keyOf(e.token)));
    if (taken >= 0) return { outcome: "id-taken", index: taken };
    const duplicates: Record<number, string> = {};
    let claimed = false;
    for (const [i, entry] of entries.entries()) {
      if (skip[i] !== undefined || !entry.deduplicate || !this.claims.has(claimKey(entry.token))) continue;
      claimed = true;
      const owner = this.liveClaimOwner(entry.token, now);
      if (owner) duplicates[i] = owner;
    }
    // Nothing is written when a deduplicating entry met a claim: the caller decides on its owner and calls again.
    if (claimed) return { outcome: "claimed", duplicates };
    this.write(
      written.map((e) => e.token),
      written.map((e) => e.audit),
      written.filter((e) => e.deduplicate).map((e) => e.token),
    );
    return { outcome: "written", duplicates: {} };
  }

  async claimFingerprints(tokens: StoredToken[]): Promise<void> {
    for (const token of tokens) this.claimIfUnclaimed(token);
  }

  async get(tenantId: string, id: string): Promise<StoredToken | undefined> {
    const token = this.tokens.get(`${tenantId}\n${id}`);
    return token ? structuredClone(token) : undefined;
  }

  async getMany(tenantId: string, ids: string[]): Promise<StoredToken[]> {
    const found = await Promise.all([...new Set(ids)].map((id) => this.get(tenantId, id)));
    return found.filter((token): token is StoredToken => token !== undefined);
  }

  async list(tenantId: string, filter: TokenListFilter, page: PageRequest): Promise<StorePage<StoredToken>> {
    const cursor = page.start === undefined ? undefined : decodePosition(page.start);
    if (page.start !== undefined && cursor === undefined)
      throw validationError("The start cursor is invalid.");
    const all = this.listed(tenantId, filter);
    const after = cursor === undefined ? all : all.filter((t) => listingPosition(t) < cursor);
    const offset = cursor ? 0 : (page.page - 1) * page.size;
    const items = after.slice(offset, offset + page.size);
    const last = items.at(-1);
    return {
      items: items.map((t) => structuredClone(t)),
      total: all.length,
      ...(after.length > offset + page.size && last ? { next: encodePosition(listingPosition(last)) } : {}),
    };
  }

  async page(tenantId: string, filter: TokenListFilter, size: number, after: string | undefined) {
    const below = this.listed(tenantId, filter).filter(
      (t) => after === undefined || listingPosition(t) < after,
    );
    const items = below.slice(0, size);
    const last = items.at(-1);
    return {
      items: items.map((t) => structuredClone(t)),
      ...(below.length > size && last ? { next: listingPosition(last) } : {}),
    };
  }

  async replace(
    token: StoredToken,
    expectedVersion: number,
    audit: LogEntry,
    options: {
      now: Date;
      transaction?: TokenHold;
      previous: TokenAsRead;
      previousFingerprint?: string;
      previousSearchHashes?: string[];
    },
  ): Promise<WriteOutcome> {
    if (options.transaction) throw unsupported();
    const current = this.tokens.get(keyOf(token));
    if (!current || current.version !== expectedVersion || isLocked(current, options.now)) return "conflict";
    const cvcEnd = carriedCvcEnd(token, options.previous);
    if (cvcEnd && current.cvc_expires_at !== cvcEnd) return "conflict";
    const { previousFingerprint } = options;
    if (previousFingerprint !== undefined && previousFingerprint !== token.fingerprint) {
      // The claim moves in the same write: the old one released if this token holds it, the new one taken if free.
      const old = claimKey({ ...token, fingerprint: previousFingerprint });
      if (this.claims.get(old) === token.id) this.claims.delete(old);
      this.claimIfUnclaimed(token);
    }
    this.write([token], [audit], []);
    this.dropSearchEntries(token, options.previousSearchHashes, token.search_hashes);
    return "ok";
  }

  async searchEntries(
    tenantId: string,
    hashes: string[],
    size: number,
    after: string | undefined,
    visible: (token: TokenRef) => boolean = () => true,
  ) {
    // Partition by partition (one per hash), token id ascending within each: the DynamoDB store's order. The
    // position is this store's own (opaque to callers): the index of the hash and the last token id examined.
    // An entry's container is its token's (the DynamoDB store's lookup items are rewritten with every write).
    const all = hashes.flatMap((hash, index) =>
      [...(this.search.get(searchKey(tenantId, hash)) ?? [])]
        .sort()
        .map((tokenId) => ({ index, hash, tokenId })),
    );
    const [afterIndex, afterId] = after === undefined ? [-1, ""] : (JSON.parse(after) as [number, string]);
    const rest = all.filter((e) => e.index > afterIndex || (e.index === afterIndex && e.tokenId > afterId));
    const entries: { hash: string; tokenId: string; position: string }[] = [];
    for (const [examined, entry] of rest.entries()) {
      const container = this.tokens.get(keyOf({ tenant_id: tenantId, id: entry.tokenId }))?.container;
      if (container === undefined || visible({ id: entry.tokenId, container }))
        entries.push({
          hash: entry.hash,
          tokenId: entry.tokenId,
          position: JSON.stringify([entry.index, entry.tokenId]),
        });
      if (entries.length >= size || examined + 1 >= SEARCH_SCAN_ITEMS)
        return examined + 1 < rest.length
          ? { entries, next: JSON.stringify([entry.index, entry.tokenId]) }
          : { entries };
    }
    return { entries };
  }

  async removeStaleSearchEntry(token: { tenant_id: string; id: string }, hash: string): Promise<void> {
    const current = this.tokens.get(keyOf(token));
    if (current && (current.lock || current.search_hashes?.includes(hash))) return;
    this.search.get(searchKey(token.tenant_id, hash))?.delete(token.id);
  }

  /** What the sweep does at the end of a cvc's hour (SweepStore.removeCvc): the cvc goes, the version stays. */
  async removeCvc(tenantId: string, tokenId: string, now: Date): Promise<void> {
    const token = this.tokens.get(keyOf({ tenant_id: tenantId, id: tokenId }));
    if (!token?.cvc_expires_at || Date.parse(token.cvc_expires_at) > now.getTime()) return;
    delete token.sealed_cvc;
    delete token.cvc_expires_at;
  }

  async delete(
    token: StoredToken,
    audit: LogEntry,
    options: { now: Date; transaction?: TokenHold },
  ): Promise<WriteOutcome> {
    if (options.transaction) throw unsupported();
    const current = this.tokens.get(keyOf(token));
    if (!current || isLocked(current, options.now)) return "conflict";
    this.auditLog.add([audit]);
    this.tokens.delete(keyOf(token));
    if (this.claims.get(claimKey(token)) === token.id) this.claims.delete(claimKey(token));
    this.dropSearchEntries(token, token.search_hashes, []);
    return "ok";
  }

  /** Tokens a listing shows, newest first: live, committed, and matching the filter and visibility. */
  private listed(tenantId: string, filter: TokenListFilter): StoredToken[] {
    if (filter.visibility && isEmpty(filter.visibility)) return [];
    const nowSeconds = Math.floor(filter.now.getTime() / 1000);
    return [...this.tokens.values()]
      .filter(
        (t) =>
          t.tenant_id === tenantId &&
          // Expiry is compared in whole seconds, as the DynamoDB store's expires_epoch is.
          (t.expires_at === undefined || Math.floor(Date.parse(t.expires_at) / 1000) > nowSeconds) &&
          t.lock?.operation !== "create" &&
          (!filter.types?.length || filter.types.includes(t.type)) &&
          (filter.containerPrefix === undefined || t.container.startsWith(filter.containerPrefix)) &&
          (filter.fingerprint === undefined || t.fingerprint === filter.fingerprint) &&
          Object.entries(filter.metadata ?? {}).every(([k, v]) => lowered(t.metadata)[k] === v) &&
          (filter.visibility === undefined || isVisible(filter.visibility, t)),
      )
      .sort((a, b) => listingPosition(b).localeCompare(listingPosition(a)));
  }

  async liveFingerprintOwner(tenantId: string, type: string, fingerprint: string, now: Date) {
    return this.liveClaimOwner({ tenant_id: tenantId, type: type as StoredToken["type"], fingerprint }, now);
  }

  /** The live token holding `token`'s fingerprint claim, or undefined after releasing a stale claim. */
  private liveClaimOwner(
    token: Pick<StoredToken, "tenant_id" | "type" | "fingerprint">,
    now: Date,
  ): string | undefined {
    const ownerId = this.claims.get(claimKey(token));
    if (!ownerId) return undefined;
    const owner = this.tokens.get(`${token.tenant_id}\n${ownerId}`);
    const live =
      owner &&
      owner.lock?.operation !== "create" &&
      owner.type === token.type &&
      owner.fingerprint === token.fingerprint &&
      (!owner.expires_at || Date.parse(owner.expires_at) > now.getTime());
    if (live) return ownerId;
    this.claims.delete(claimKey(token));
    return undefined;
  }

  private claimIfUnclaimed(token: StoredToken): void {
    if (!this.claims.has(claimKey(token))) this.claims.set(claimKey(token), token.id);
  }

  /**
   * One write: the tokens, their claims and lookup items and their audit entries. Synchronous, as every check
   * before it in the same method: nothing interleaves between a condition and its write (a DynamoDB transaction).
   */
  private write(tokens: StoredToken[], audit: LogEntry[], claiming: StoredToken[]): void {
    this.auditLog.add(audit);
    for (const token of tokens) {
      this.tokens.set(keyOf(token), structuredClone(token));
      for (const hash of token.search_hashes ?? []) {
        const ids = this.search.get(searchKey(token.tenant_id, hash)) ?? new Set<string>();
        this.search.set(searchKey(token.tenant_id, hash), ids.add(token.id));
      }
    }
    for (const token of claiming) this.claims.set(claimKey(token), token.id);
  }

  private dropSearchEntries(
    owner: Pick<StoredToken, "tenant_id" | "id">,
    previous: string[] | undefined,
    kept: string[] | undefined,
  ): void {
    const keep = new Set(kept ?? []);
    for (const hash of previous ?? [])
      if (!keep.has(hash)) this.search.get(searchKey(owner.tenant_id, hash))?.delete(owner.id);
  }
}

const keyOf = (token: Pick<StoredToken, "tenant_id" | "id">) => `${token.tenant_id}\n${token.id}`;
const claimKey = (token: Pick<StoredToken, "tenant_id" | "type" | "fingerprint">) =>
  `${token.tenant_id}\n${token.type}\n${token.fingerprint}`;
const searchKey = (tenantId: string, hash: string) => `${tenantId}\nv${hashVersionOf(hash)}\n${hash}`;
/** A listing position: the DynamoDB store's GSI1SK. */
const lowered = (map: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k.toLowerCase(), v.toLowerCase()]));
const isLocked = (token: StoredToken, now: Date) =>
  token.lock !== undefined && token.lock.expiresEpoch > Math.floor(now.getTime() / 1000);

function unsupported(): Error {
  return new Error("The in-memory token store keeps no transactions: test those through DynamoDB Local.");
}
