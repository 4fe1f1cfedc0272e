import type { AccessRule } from "#shared/domain/access-rules.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { Permission } from "#shared/domain/permissions.ts";

export interface StoredSession {
  id: string;
  tenant_id: string;
  state: "created" | "authorized";
  created_by: string;
  created_at: string;
  expires_at: string;
  authorized_by?: string;
  /** The key of `authorized_by` that authorized it: revoking that key ends the session. */
  authorized_key_id?: string;
  authorized_at?: string;
  permissions?: Permission[];
  rules?: AccessRule[];
  /**
   * A sandbox run's `svc` key (issueServiceSession): held by the runner's host side, never by a browser, so its
   * calls spend the tenant's budget as its application's keys do, not the browser sub-budget.
   */
  service?: true;
}

export interface SessionStore {
  /** The session with its key (hash) and nonce (hash), in one transaction with its audit entry. */
  create(session: StoredSession, keyHash: string, nonceHash: string, audit: LogEntry): Promise<void>;
  get(tenantId: string, id: string): Promise<StoredSession | undefined>;
  /** The session a nonce opens, by the nonce's hash. */
  findByNonce(nonceHash: string): Promise<{ tenantId: string; sessionId: string } | undefined>;
  /** Authorizes a created, unexpired session; "not-created" when it already was, "expired" when too late. */
  authorize(session: StoredSession, now: Date, audit: LogEntry): Promise<"ok" | "not-created" | "expired">;
  /** Stores a session that is authorized from the start (the sandbox's short-lived `svc` key). */
  createAuthorized(session: StoredSession, keyHash: string, audit: LogEntry): Promise<void>;
  /** Deletes an expired session with its key and nonce; false when it is gone or still valid. */
  removeExpired(tenantId: string, id: string, now: Date): Promise<boolean>;
}
