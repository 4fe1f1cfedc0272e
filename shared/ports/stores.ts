import type { TokenRef } from "#shared/domain/access-rules.ts";
import type { LogEntry, LogQuery } from "#shared/domain/audit.ts";
import type { Application, ApplicationKey, Tenant, TenantMember, User } from "#shared/domain/entities.ts";
import type { EffectRef } from "#shared/domain/idempotency-scope.ts";
import type { KeyedToken } from "#shared/domain/keys/key-refs.ts";
import type {
  StoredToken,
  TokenHold,
  TokenListFilter,
  TransactionContext,
} from "#shared/domain/tokens/token.ts";

/** A page of results from a store: the items asked for and how many match in all. */

/** A token as a write read it: the keys it needed (for the key counters) and its cvc (see carriedCvcEnd). */
export type TokenAsRead = KeyedToken & Partial<Pick<StoredToken, "sealed_cvc" | "cvc_expires_at">>;

export interface StorePage<T> {
  items: T[];
  total: number;
  /** Opaque cursor for the next page when cursor paging was used. */
  next?: string;
}

export interface PageRequest {
  page: number;
  size: number;
  /** Cursor from a previous page (`start`); when set, `page` is ignored. */
  start?: string;
}

/** A new key as stored: its hash, never the key. */
export interface StoredKey extends ApplicationKey {
  tenant_id: string;
  key_hash: string;
  /** The member whose credentials minted this key: deleting that member revokes it. */
  minted_by?: string;
}

export interface KeyRecord {
  tenant_id: string;
  application_id: string;
  key_id: string;
  /** Set for session keys: the session whose state decides the access. */
  session_id?: string;
}

export interface TenantStore {
  createTenant(input: {
    tenant: Tenant;
    owner: User;
    member: TenantMember;
    application: Application;
    key: StoredKey;
    audit: LogEntry[];
  }): Promise<void>;
  getTenant(tenantId: string): Promise<Tenant | undefined>;
}

/** The lookups every function makes: authentication, and what a proxy or reactor acts as. */
export interface ApplicationReader {
  get(tenantId: string, applicationId: string): Promise<Application | undefined>;
  /**
   * The application while it may act: undefined when it is gone or its deletion has begun (markDeletionStarted).
   * What authentication reads, so that a deletion that failed part-way leaves none of its keys and sessions working.
   */
  getActive(tenantId: string, applicationId: string): Promise<Application | undefined>;
  getKey(tenantId: string, applicationId: string, keyId: string): Promise<ApplicationKey | undefined>;
  /**
   * Whether a member still exists and no deletion of it has begun: the keys minted through it (`minted_by`), and
   * those of its own applications (`member_id`) and their sessions, answer only while it is.
   */
  memberActive(tenantId: string, memberId: string): Promise<boolean>;
  /** Resolves a key hash to its owner; the lookup used by authentication. */
  findKey(keyHash: string): Promise<KeyRecord | undefined>;
}

/** The audit entry of a key revoked with its holder (an application or member deleted), by the key's id. */
export type RevocationAudit = (key: { id: string; applicationId: string }) => LogEntry;

export interface ApplicationStore extends ApplicationReader {
  create(application: Application, key: StoredKey | undefined, audit: LogEntry): Promise<void>;
  list(tenantId: string, page: PageRequest): Promise<StorePage<Application>>;
  /** Replaces name, permissions and rules; fails with not-found when the application is gone. */
  update(application: Application, audit: LogEntry): Promise<void>;
  /**
   * Deletes the application and every key of it, each key's revocation logged (`keyAudit`) in the write that
   * deletes it. Returns false when it did not exist.
   */
  delete(
    tenantId: string,
    applicationId: string,
    audit: LogEntry,
    keyAudit: RevocationAudit,
  ): Promise<boolean>;
  addKey(key: StoredKey, audit: LogEntry): Promise<void>;
  listKeys(tenantId: string, applicationId: string): Promise<ApplicationKey[]>;
  /** Returns the deleted key's hash (to evict caches) or undefined when it did not exist. */
  deleteKey(
    tenantId: string,
    applicationId: string,
    keyId: string,
    audit: LogEntry,
  ): Promise<string | undefined>;
}

export interface AuditLogStore {
  /** Appends entries; reads call this before answering (fail-closed). */
  append(entries: LogEntry[]): Promise<void>;
  list(tenantId: string, query: LogQuery, page: PageRequest): Promise<StorePage<LogEntry>>;
}

export interface StoredResponse {
  status: number;
  /** The response body sealed with the caller's tenant data key (never stored in plaintext). */
  sealed_body?: string;
  /**
   * "presented": the sealed body is a ReplayBody (shared/http/replay-body.ts), the answer with each token it
   * presented replaced by a reference; a replay presents those tokens again. "unkept": the answer was too large
   * to keep (MAX_KEPT_ANSWER_CHARS); a replay answers 409 and runs nothing again.
   */
  form?: "presented" | "unkept";
  headers: Record<string, string>;
}

/** An effect an idempotent request's write transaction recorded on its record (the audit entry it wrote). */
export type RecordedEffect = EffectRef;

export type IdempotencyClaim =
  | { outcome: "claimed"; claimId: string }
  | { outcome: "in-flight" }
  | { outcome: "completed"; response: StoredResponse; requestSignature: string }
  /** The request took effect (its writes recorded it) but never completed: it died or failed after. */
  | { outcome: "effected"; effects: RecordedEffect[]; requestSignature: string };

/** Results are kept 24 hours (spec); TTL deletes them later, so reads also compare with the clock. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600;

/**
 * Blind-index lookup items one `searchEntries` call examines at most, answered or passed over: with the 10 calls
 * a search request makes at most (list-cursor.ts), hidden matches change an answer only beyond 10,000 of them.
 */
export const SEARCH_SCAN_ITEMS = 1000;
/**
 * The longest sealed answer a store keeps in one record (a request's answer for its replays, a queued reaction's
 * outcome): DynamoDB's items are at most 400 KB, and the record has its keys and state beside the answer. What
 * is longer is not kept; each caller says what happens then (never a failure of what already took effect).
 */
export const MAX_KEPT_ANSWER_CHARS = 320_000;

export interface IdempotencyStore {
  /**
   * Takes the in-flight marker for a key with a conditional write, or reports what holds it. `scope` names the
   * credential (no `#`); `requestSignature` is opaque to the store and handed back with a completed result.
   * A marker whose request took effect is never taken again: once its lease lapses it is reported "effected".
   * `leaseSeconds`: how long the marker holds the key against a retry (default the HTTP lease, longer than API
   * Gateway's timeout); work that may run longer (a queued reaction, up to its timeout_ms) passes its own.
   */
  claim(
    scope: string,
    key: string,
    requestSignature: string,
    leaseSeconds?: number,
  ): Promise<IdempotencyClaim>;
  /** Stores the answer, if `claimId` still holds the key. */
  complete(scope: string, key: string, claimId: string, response: StoredResponse): Promise<void>;
  /**
   * After a failure: frees the key if the request's effects do not stand (none, or undone by the request
   * itself), so a retry runs as new; if they do, ends the lease, so a retry replays the effect at once.
   * `knownEffects` is how many effects the request saw committed: a record holding more took one whose commit
   * answered an error (a lost answer, a timeout after DynamoDB applied it), so it is kept for a replay.
   */
  release(
    scope: string,
    key: string,
    claimId: string,
    effectsStand: boolean,
    knownEffects: number,
  ): Promise<void>;
  /**
   * Whether a live record is kept under `sentKey`, the key as the caller sent it: versions before 27 Nov 2026 kept
   * records so, and a retry across the upgrade must find its first run's. False without a read once none can be
   * left (a record's 24 h after this version first asked).
   */
  hasLegacyRecord(scope: string, sentKey: string): Promise<boolean>;
}

export type TokenCreateOutcome =
  | { outcome: "created" }
  | { outcome: "id-taken" }
  | { outcome: "duplicate"; tokenId: string }
  | { outcome: "transaction-closed" };

/** ok; conflict: the token changed, is gone or is held by another transaction; transaction-closed. */
export type WriteOutcome = "ok" | "conflict" | "transaction-closed";

/** A token to create pending in a transaction, with its deduplication and its create entry. */
export interface StagedCreate {
  token: StoredToken;
  deduplicate: boolean;
  audit: LogEntry;
}

/**
 * written: every entry is written (pending, when staged), but those `duplicates` names (entry index → the live
 * token holding its fingerprint); id-taken: the entry at `index` names a taken id (nothing more is written);
 * transaction-closed: the transaction ended.
 */
export type StageOutcome =
  | { outcome: "written"; duplicates: Record<number, string> }
  | { outcome: "id-taken"; index: number }
  | { outcome: "transaction-closed" };

/**
 * createAtOnce's outcome: as staging's (never transaction-closed), too-large when the tokens do not fit one write,
 * or claimed: deduplicating entries whose fingerprints live tokens hold (those entry index → token id). Nothing is
 * written unless `written`.
 */
export type CreateManyOutcome =
  | StageOutcome
  | { outcome: "too-large" }
  | { outcome: "claimed"; duplicates: Record<number, string> };

export interface TokenStore {
  /**
   * Writes the token, its fingerprint claim, its expiry index entries and its audit entry in one transaction.
   * With `deduplicate`, an existing live token of the same tenant, type and fingerprint wins (race-safe).
   * `idGiven`: the caller chose the token's id, so "id-taken" may be the answer, and it comes before "duplicate".
   */
  create(
    token: StoredToken,
    options: { deduplicate: boolean; idGiven?: boolean; now: Date; transaction?: TransactionContext },
    audit: LogEntry,
  ): Promise<TokenCreateOutcome>;
  /**
   * Creates tokens pending in an open transaction, as create does one, in as few writes as fit (many
   * TransactWriteItems: only the transaction's commit makes them visible, all at once).
   */
  stageCreates(entries: StagedCreate[], transaction: TransactionContext, now: Date): Promise<StageOutcome>;
  /**
   * Creates tokens in one write (TransactWriteItems), as create does one: visible at once or not at all.
   * Entries in `skip` (duplicates already known) are left out.
   */
  createAtOnce(entries: StagedCreate[], skip: Record<number, string>, now: Date): Promise<CreateManyOutcome>;
  /** After a commit: the best-effort fingerprint claims of tokens created without deduplication. */
  claimFingerprints(tokens: StoredToken[], now: Date): Promise<void>;
  get(tenantId: string, id: string): Promise<StoredToken | undefined>;
  getMany(tenantId: string, ids: string[]): Promise<StoredToken[]>;
  list(tenantId: string, filter: TokenListFilter, page: PageRequest): Promise<StorePage<StoredToken>>;
  /**
   * A cursor page: at most `size` tokens below the listing position `after`, newest first, reading a bounded
   * number of items and counting nothing; `next` is the position to go on from (opaque, for the domain to seal).
   */
  page(
    tenantId: string,
    filter: TokenListFilter,
    size: number,
    after: string | undefined,
  ): Promise<{ items: StoredToken[]; next?: string }>;
  /**
   * Replaces the token if its version is still `expectedVersion` and no live transaction holds it; false
   * otherwise. In a transaction the new version waits on the transaction's op item until commit. Outside one, a
   * changed fingerprint moves the fingerprint claim in the same write: the claim of `previousFingerprint` is
   * released if this token holds it, the new one is claimed if free.
   */
  replace(
    token: StoredToken,
    expectedVersion: number,
    audit: LogEntry,
    options: {
      now: Date;
      transaction?: TokenHold;
      /** The token as read (what `expectedVersion` names): the keys it needed, for the key counters. */
      previous: TokenAsRead;
      previousFingerprint?: string;
      /** The search hashes it replaces: lookup items of those it no longer has are removed after the write. */
      previousSearchHashes?: string[];
    },
  ): Promise<WriteOutcome>;
  /**
   * Blind-index lookup (search-index.ts): ids of tokens whose lookup items sit under `hashes` (one per token
   * type), at most `size`, after the opaque position `after`. An entry may be stale: the caller checks the
   * token's current search hashes. Entries of tokens `visible` refuses (by id and container) are passed over
   * without counting toward `size`, up to SEARCH_SCAN_ITEMS examined per call.
   */
  searchEntries(
    tenantId: string,
    hashes: string[],
    size: number,
    after: string | undefined,
    visible?: (token: TokenRef) => boolean,
  ): Promise<{ entries: { hash: string; tokenId: string; position: string }[]; next?: string }>;
  /**
   * The live token holding this fingerprint's claim, if any (a stale claim is released): how a deduplicating
   * create finds a token still fingerprinted under an earlier HMAC version while a rewrap runs.
   */
  liveFingerprintOwner(
    tenantId: string,
    type: string,
    fingerprint: string,
    now: Date,
  ): Promise<string | undefined>;
  /**
   * Removes a stale lookup item a search met: only while the token (if any) does not hold the hash and no
   * transaction holds it, checked in the removal's own write, so a write that gave the token the hash after the
   * search read it keeps its item.
   */
  removeStaleSearchEntry(token: { tenant_id: string; id: string }, hash: string): Promise<void>;
  /** Deletes the token (or, in a transaction, marks it for deletion at commit); false when gone or locked. */
  delete(
    token: StoredToken,
    audit: LogEntry,
    options: { now: Date; transaction?: TokenHold },
  ): Promise<WriteOutcome>;
}

export interface StoredTransaction {
  id: string;
  tenant_id: string;
  state: "open" | "committed" | "rolled_back";
  /** The application that opened it (shown to callers). */
  created_by?: string;
  /** The credential that opened it and alone may use it: `key:<application key id>` or `session:<session id>`. */
  opened_by?: string;
  created_at: string;
  expires_at: string;
  /** Committed in stages (a batch tokenize), its operations not all applied yet: the sweep finishes it. */
  rolling_forward?: boolean;
  /** Rolled back in stages (at expiry, or too large for one write), not all undone yet: the sweep finishes it. */
  rolling_back?: boolean;
  /**
   * A batch's (openBatch): epoch seconds past which its request can no longer be running, so its pending creates
   * hold nothing (their claims are taken over) and it can no longer commit.
   */
  answer_by?: number;
}

/** A pending operation of a transaction: which token, where, and how (transaction-store.ts operationRefs). */
export interface TransactionOperationRef {
  operation: "create" | "update" | "delete";
  token: TokenRef;
  /** An update's staged version: its container may differ (a move). */
  next?: TokenRef;
  /**
   * An update that takes reveal-level token:update (manage.ts revealChanges): it moves the token, or changes a
   * field evaluated on the stored data (mask, fingerprint_expression, search_indexes).
   */
  reveal?: boolean;
}

export interface TransactionStore {
  create(transaction: StoredTransaction, audit: LogEntry): Promise<void>;
  get(tenantId: string, id: string): Promise<StoredTransaction | undefined>;
  /**
   * What each pending operation writes, as access rules judge it: the token it creates, updates or deletes as it is
   * stored now, and for an update the container of its staged version (the same one unless it moves the token).
   */
  operationRefs(tenantId: string, id: string): Promise<TransactionOperationRef[]>;
  /**
   * Applies every pending operation at once, answering how many tokens it created (they exist from now on); false
   * when the transaction is no longer open (or expired). With `allowed`, the operations the commit applies (read
   * by the commit itself, again whenever one joined since: its write requires no other joined) are judged first,
   * and "refused" answered, nothing applied, when it refuses them.
   */
  commit(
    transaction: StoredTransaction,
    now: Date,
    audit: LogEntry,
    allowed?: (operations: TransactionOperationRef[]) => boolean,
    onCreated?: (created: number) => void,
  ): Promise<{ created: number } | false | "refused">;
  /**
   * Applies what a staged commit left unapplied (a request that died after its commit point), answering how many
   * tokens the transaction created: the request that died counted none of them. `onCreated` (both) is told each
   * write's creations as it lands, so a run that fails or dies midway has counted what it applied (review r3b:
   * counted at the end, the creations of the chunks a failed request applied were never counted by anyone).
   */
  finishCommit(
    transaction: StoredTransaction,
    now: Date,
    onCreated?: (created: number) => void,
  ): Promise<{ created: number }>;
  /** Undoes what a staged rollback left undone (a request that died after closing the transaction). */
  finishRollback(transaction: StoredTransaction, audit: LogEntry): Promise<void>;
  /**
   * Ends the operation items of a transaction whose record is gone (TTL, in any order): it may have committed, so
   * only an operation whose token it still holds is undone (its reservation and claim given back with it).
   */
  undoOrphan(tenantId: string, id: string, audit: LogEntry): Promise<void>;
  /** Discards every pending operation; false when the transaction is no longer open. */
  rollback(transaction: StoredTransaction, audit: LogEntry, options?: { expired: boolean }): Promise<boolean>;
  /**
   * Removes a closed transaction's operation items (each holds a sealed copy of the token as staged): commit and
   * rollback do so once applied; the sweep again at the transaction's expiry, for a request that died first.
   */
  forgetOperations(tenantId: string, id: string): Promise<void>;
  /**
   * What follows the applying of a committed transaction's operations (claims moved or released, search items
   * settled), then their items removed: the sweep's, at the expiry, for a request that died after applying them.
   */
  settleCommitted(tenantId: string, id: string): Promise<void>;
}
