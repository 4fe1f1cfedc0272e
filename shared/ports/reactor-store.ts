import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredFormula, StoredReactor } from "#shared/domain/reactors/model.ts";

export type ReactorKind = "formula" | "reactor";

/** Formulas, reactors, stored reaction outcomes and the tenant's webhook secret (sealed). */
export interface ReactorStore {
  /** Writes the item with its audit entry; false when `create` finds one or `replace` finds none. */
  put<T extends StoredFormula | StoredReactor>(
    kind: ReactorKind,
    item: T,
    audit: LogEntry,
    mode: "create" | "replace",
  ): Promise<boolean>;
  get<T>(kind: ReactorKind, tenantId: string, id: string): Promise<T | undefined>;
  list<T>(kind: ReactorKind, tenantId: string): Promise<T[]>;
  /** Deletes the item with its audit entry; false when there was none. */
  delete(kind: ReactorKind, tenantId: string, id: string, audit: LogEntry): Promise<boolean>;
  /** A stored reaction outcome (sealed), so a redelivered job never runs the code again. */
  reaction(tenantId: string, requestId: string): Promise<string | undefined>;
  /** Stores an outcome once; returns the stored one (a concurrent run may have stored first). */
  storeReaction(tenantId: string, requestId: string, sealedOutcome: string, now: Date): Promise<string>;
  webhookSecret(tenantId: string): Promise<string | undefined>;
  /** Sets the sealed secret; with `onlyIfAbsent`, keeps an existing one and returns it. */
  putWebhookSecret(
    tenantId: string,
    sealed: string,
    options: { onlyIfAbsent: boolean },
    audit?: LogEntry,
  ): Promise<string>;
}
