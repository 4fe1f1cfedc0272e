/**
 * What a deduplicating create does about a value's claim held by a token another transaction is still creating
 * (docs/tokens.md, "Deduplication"). Such a token does not exist for this caller until that transaction commits,
 * so its claim is taken over: an open transaction, even a public key's, must not hold a value against every
 * deduplicating create of the tenant for its hour. A batch's (`POST /tokenize`) is waited for instead while its
 * request can still be running (it commits or rolls back within it): taking it over let two overlapping batches
 * both keep the value (an import sends several at once). Of two batches only the older waits, the younger gives
 * up at once (409, retried), so no two wait for each other. Past its request's time the batch died: its claim is
 * taken over unless it died past its commit point (the caller checks: the sweep makes those creates live).
 */
import { BATCH_CLAIM_GRACE_SECONDS } from "#shared/domain/transactions.ts";
import type { TokenLock, TransactionContext } from "./token.ts";

export type PendingClaim =
  /** The owner is no other transaction's pending create: the claim is judged as any (live or stale). */
  | "not-pending"
  /** Another transaction's pending create (not a batch's): taken over. */
  | "take-over"
  /** A batch's, within its request's time, and this caller is no younger batch: look again shortly. */
  | "wait"
  /** A batch's, within its request's time, and this caller is a younger batch: 409 at once. */
  | "give-up"
  /** A batch's past its request's time: taken over, unless that batch committed. */
  | "lapsed-batch";

export function pendingClaim(
  lock: TokenLock | undefined,
  mine: TransactionContext | undefined,
  nowEpochSeconds: number,
): PendingClaim {
  if (lock?.operation !== "create" || lock.transactionId === mine?.id) return "not-pending";
  if (lock.batchAnswerBy === undefined) return "take-over";
  if (lock.batchAnswerBy + BATCH_CLAIM_GRACE_SECONDS <= nowEpochSeconds) return "lapsed-batch";
  const younger =
    mine?.batchAnswerBy !== undefined &&
    (mine.expiresEpoch > lock.expiresEpoch ||
      (mine.expiresEpoch === lock.expiresEpoch && mine.id > lock.transactionId));
  return younger ? "give-up" : "wait";
}
