import { SWEEP_LOOKBACK_HOURS } from "#shared/domain/tokens/sweep.ts";
import { listingPosition, type StoredToken } from "#shared/domain/tokens/token.ts";
import { stripKeys } from "./audit-items.ts";
import { epochSeconds } from "./schema.ts";
import { shardOf, TOKEN_SHARDS, tokenKeys } from "./token-keys.ts";

/**
 * Expired tokens are deleted by the sweep, which also takes them off their keys' counts (key-counters.ts); DynamoDB
 * TTL removes any it missed, this long after expiry. A TTL deletion counts nothing down, so the key version such a
 * token needed would stay "in use" for good: the backstop waits until the sweep can no longer reach the token (it
 * looks back SWEEP_LOOKBACK_HOURS), so TTL takes only what a sweep stopped for two days left behind. Until then an
 * expired token is unreadable all the same (isLive).
 */
export const TTL_BACKSTOP_SECONDS = (SWEEP_LOOKBACK_HOURS + 1) * 3600;

/** Attributes the store adds for its own queries and locks; they never leave the adapter. */
const STORE_ONLY = [
  "metadata_lc",
  "expires_epoch",
  "txn_id",
  "txn_op",
  "txn_expires_epoch",
  "txn_batch",
] as const;

function lowerMap(map: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!map) return undefined;
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k.toLowerCase(), v.toLowerCase()]));
}

/** The table item of a token: its keys, listing index, lock and expiry attributes beside its fields. */
/**
 * The token as a write that took no hold stores it: a copy of a token read with a lapsed lock must not carry
 * that lock back (a staged commit finished later would pass its "still held" check on the newer version).
 */
export function withoutLock(token: StoredToken): StoredToken {
  const { lock: _lapsed, ...rest } = token;
  return rest;
}

export function tokenItem(token: StoredToken): Record<string, unknown> {
  const expiresEpoch = token.expires_at ? epochSeconds(new Date(token.expires_at)) : undefined;
  const { lock, ...fields } = token;
  return {
    ...tokenKeys.token(token.tenant_id, token.id),
    GSI1PK: tokenKeys.listing(token.tenant_id, shardOf(token.id, TOKEN_SHARDS)),
    GSI1SK: listingPosition(token),
    entity: "token",
    ...fields,
    metadata_lc: lowerMap(token.metadata),
    ...(lock
      ? {
          txn_id: lock.transactionId,
          txn_op: lock.operation,
          txn_expires_epoch: lock.expiresEpoch,
          ...(lock.batchAnswerBy ? { txn_batch: lock.batchAnswerBy } : {}),
        }
      : {}),
    ...(expiresEpoch !== undefined
      ? { expires_epoch: expiresEpoch, ttl: expiresEpoch + TTL_BACKSTOP_SECONDS }
      : {}),
  };
}

export function tokenFromItem(item: Record<string, unknown>): StoredToken {
  const token = stripKeys<Record<string, unknown>>(item);
  for (const attribute of STORE_ONLY) delete token[attribute];
  if (typeof item.txn_id === "string")
    token.lock = {
      transactionId: item.txn_id,
      operation: item.txn_op,
      expiresEpoch: Number(item.txn_expires_epoch),
      ...(typeof item.txn_batch === "number" ? { batchAnswerBy: item.txn_batch } : {}),
    };
  return token as unknown as StoredToken;
}
