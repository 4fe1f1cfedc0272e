import type { LogEntry } from "#shared/domain/audit.ts";

/**
 * A tenant's key versions as stored (one small item; absent for a tenant that never rotated): the data-key
 * version a rotation made current (the 30-day period number goes on past it), the HMAC version new fingerprints
 * and search hashes use, and the HMAC versions lookups still try (current first).
 */
export interface KeyState {
  dataVersion?: number;
  /**
   * The rotation period in which a rotation made `dataVersion` current: one more version each period from
   * there, so a rotation never holds off the 30-day rotation (absent in states stored before 27 Nov 2026).
   */
  rotatedInPeriod?: number;
  hmacVersion: number;
  hmacLive: number[];
  /** Optimistic concurrency: each change requires the revision it read. */
  revision: number;
}

export const INITIAL_KEY_STATE: KeyState = { hmacVersion: 1, hmacLive: [1], revision: 0 };

/** One key of the tenant (a data-key or an HMAC version) with its token count. */
export interface KeyVersionRecord {
  keyId: string;
  createdAt?: string;
  /** Counted from the key's start: keys made before counting existed have an unknown count. */
  tracked: boolean;
  tokens: number;
  destroyedAt?: string;
}

export type DestroyOutcome = "destroyed" | "in-use" | "uncounted" | "not-found" | "changed";

export interface KeyVersionStore {
  state(tenantId: string): Promise<KeyState>;
  /** Marks a key counted from its start; called before the key exists (so before any token can need it). */
  track(tenantId: string, keyId: string, now: Date): Promise<void>;
  /** Replaces the state if its revision is still `from`'s, marking `newKeys` counted; false when it changed. */
  rotate(
    tenantId: string,
    from: KeyState,
    to: KeyState,
    newKeys: string[],
    audit: LogEntry,
    now: Date,
  ): Promise<boolean>;
  versions(tenantId: string): Promise<KeyVersionRecord[]>;
  /**
   * Destroys a counted key no token needs (its wrapped key deleted, its counters marked so no write can count a
   * token under it again), with its audit entry, and the state change when given, all in one write.
   */
  destroy(
    tenantId: string,
    keyId: string,
    audit: LogEntry,
    now: Date,
    state?: { from: KeyState; to: KeyState },
  ): Promise<DestroyOutcome>;
}

/** A rewrap job: re-seals every token of the tenant under the current key versions, page by page. */
export interface RewrapJob {
  id: string;
  tenant_id: string;
  status: "running" | "succeeded" | "failed";
  /** Tokens counted under older data-key versions when it started (unknown ones not included). */
  total: number;
  /** Tokens re-sealed so far. */
  done: number;
  /** Tokens left as they were: held by an open transaction (a later rewrap takes them). */
  skipped: number;
  /** The next page to process (from 0); its listing position is `cursor` (absent: the newest token). */
  page: number;
  cursor?: string;
  /** Every page is done: what remains is to finish the job. */
  end?: boolean;
  /** The last page a message was sent for. */
  sent: number;
  created_at: string;
  /** When a page last moved it on (or it started): a running job without progress for long has stalled. */
  progressed_at?: string;
  finished_at?: string;
}

export interface RewrapJobStore {
  /**
   * Starts `job` as the tenant's one job, if the tenant's latest job is still `previous` (none: the tenant has
   * had none); a running `previous` (stalled: the caller checked) ends `failed` in the same write. False when
   * another job started meanwhile, or `previous` moved on.
   */
  create(job: RewrapJob, audit: LogEntry, previous?: RewrapJob): Promise<boolean>;
  /** The tenant's latest job, whatever its state. */
  latest(tenantId: string): Promise<RewrapJob | undefined>;
  get(tenantId: string, id: string): Promise<RewrapJob | undefined>;
  /** Records page `page` done (moving to `page + 1` at `cursor`) if the job is still at it; false otherwise. */
  advance(
    tenantId: string,
    id: string,
    page: number,
    progress: { cursor?: string; done: number; skipped: number; at: Date },
  ): Promise<boolean>;
  /** Notes that the message of `page` was sent. */
  markSent(tenantId: string, id: string, page: number): Promise<void>;
  /** Ends a running job (with its audit entry); false when it was not running. */
  finish(
    tenantId: string,
    id: string,
    status: "succeeded" | "failed",
    audit: LogEntry,
    now: Date,
  ): Promise<boolean>;
}

/** One page of a rewrap job, as the job queue carries it (no data: the job record holds the position). */
export interface RewrapPageMessage {
  kind: "rewrap";
  tenantId: string;
  jobId: string;
  page: number;
}
