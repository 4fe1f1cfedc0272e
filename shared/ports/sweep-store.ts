import type { LogEntry } from "#shared/domain/audit.ts";
import type { TokenType } from "#shared/domain/tokens/types.ts";

/** Something that falls due: a token's expiry (T), a cvc's end of life (C), a transaction's expiry (X). */
export interface DueItem {
  key: { PK: string; SK: string };
  kind: "T" | "C" | "X" | "S";
  tenantId: string;
  tokenId: string;
  tokenType: TokenType;
  dueAt: string;
  /** How many times handling it failed (it is put off longer each time). */
  attempts?: number;
}

/**
 * What became of an expired token: deleted (its type and fingerprint), held by a transaction, or neither. Held
 * with `transactionId`: by a transaction past its expiry that has not yet finished with the token (committed
 * past its commit point and not rolled forward, or open and not rolled back), to finish before the token goes.
 */
export type Expiry =
  | { type: string; fingerprint: string }
  | { heldUntil: Date; transactionId?: string }
  | undefined;

/** Where a page of due items ended (the store's own key of the last item read). */
export type DueCursor = Record<string, string>;

export interface SweepStore {
  readonly shards: number;
  lastCompletedHour(): Promise<string | undefined>;
  setLastCompletedHour(hour: string): Promise<void>;
  /**
   * A page of the items of `hour`'s bucket `shard` (a bounded number), from where the page before ended (its
   * `next`): a bucket may hold a busy hour's every expiring token and cvc.
   */
  due(hour: Date, shard: number, after?: DueCursor): Promise<{ items: DueItem[]; next?: DueCursor }>;
  done(item: DueItem): Promise<void>;
  /**
   * Deletes the token if it is still expired and no open transaction holds it (with its audit entry): its type
   * and fingerprint when deleted, when the hold ends if held, else undefined.
   */
  expireToken(item: DueItem, now: Date, audit: LogEntry): Promise<Expiry>;
  /**
   * Moves the entry to `dueAt` (a token a transaction holds is looked at again once the hold ends; an item that
   * failed, later), with `attempts` failures so far.
   */
  defer(item: DueItem, dueAt: Date, attempts?: number): Promise<void>;
  removeCvc(item: DueItem, now: Date): Promise<void>;
  releaseFingerprint(tenantId: string, type: string, fingerprint: string, tokenId: string): Promise<void>;
}
