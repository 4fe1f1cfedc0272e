import type { LogEntry } from "#shared/domain/audit.ts";
import type { ReactorToStore, StoredFormula, StoredReactor } from "#shared/domain/reactors/model.ts";

export type ReactorKind = "formula" | "reactor";

/** How long a reaction's outcome is kept: react-async results are answered for 24 hours (docs/reactors.md). */
export const REACTION_RETENTION_SECONDS = 24 * 3600;

export interface StoredReaction {
  sealedOutcome: string;
  reactorId?: string;
  /** Who may read it (react-async): the credential and grant that asked; absent for callback reactions. */
  owner?: string;
  storedAt?: string;
}

/** Formulas, reactors, stored reaction outcomes and the tenant's webhook secret (sealed). */
export interface ReactorStore {
  /**
   * Writes the item with its audit entry; false when `create` finds one or `replace` finds none. A reactor is
   * written with its configuration sealed, never as a plain map.
   */
  put<T extends StoredFormula | ReactorToStore>(
    kind: ReactorKind,
    item: T,
    audit: LogEntry,
    mode: "create" | "replace",
  ): Promise<boolean>;
  get<T>(kind: ReactorKind, tenantId: string, id: string): Promise<T | undefined>;
  list<T>(kind: ReactorKind, tenantId: string): Promise<T[]>;
  /**
   * The reactor's configuration sealed again (a rewrap), replacing a plain map of an older item: only if its
   * configuration is still the one `reactor` read (sealed or plain); false otherwise.
   */
  resealConfiguration(reactor: StoredReactor, sealed: string, audit: LogEntry): Promise<boolean>;
  /** Deletes the item with its audit entry; false when there was none. */
  delete(kind: ReactorKind, tenantId: string, id: string, audit: LogEntry): Promise<boolean>;
  /** A stored reaction outcome (sealed), so a redelivered job never runs the code again. */
  reaction(tenantId: string, requestId: string): Promise<string | undefined>;
  /** A stored outcome with what says whose it is (react-async results). */
  reactionRecord(tenantId: string, requestId: string): Promise<StoredReaction | undefined>;
  /**
   * Stores an outcome once, kept REACTION_RETENTION_SECONDS; returns the stored one (a concurrent run may have
   * stored first).
   */
  storeReaction(
    tenantId: string,
    requestId: string,
    sealedOutcome: string,
    now: Date,
    about: { reactorId: string; owner?: string },
  ): Promise<string>;
  webhookSecret(tenantId: string): Promise<string | undefined>;
  /** Sets the sealed secret; with `onlyIfAbsent`, keeps an existing one and returns it. */
  putWebhookSecret(
    tenantId: string,
    sealed: string,
    options: { onlyIfAbsent: boolean },
    audit?: LogEntry,
  ): Promise<string>;
  /** The secret sealed again (a rewrap): only if it is still sealed as `from` (a rotation meanwhile wins). */
  resealWebhookSecret(tenantId: string, from: string, to: string, audit: LogEntry): Promise<boolean>;
}
