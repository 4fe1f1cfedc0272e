import { keySetRefs } from "#shared/domain/keys/key-refs.ts";
import type { StoredToken, TransactionContext } from "#shared/domain/tokens/token.ts";
import { epochSeconds } from "./schema.ts";
import { tokenItem, withoutLock } from "./token-items.ts";
import { MAX_TRANSACTION_OPERATIONS, OPERATION_TTL_SECONDS, transactionKeys } from "./transaction-keys.ts";

/** A write may proceed when no transaction holds the token, or the one that did has expired. */
export const LOCK_FREE = "(attribute_not_exists(txn_id) OR txn_expires_epoch <= :now)";

/** The writes that enrol a token operation in an open transaction: its op item and the record's count. */
export function transactionWrites(
  tableName: string,
  token: StoredToken,
  transaction: TransactionContext,
  operation: "create" | "update" | "delete",
  now: Date,
  next?: StoredToken,
  previousFingerprint?: string,
  /** The keys the token needed before and needs after the operation: counted at commit or rollback. */
  refs: { before: string[]; after: string[] } = { before: [], after: keySetRefs(token) },
) {
  return [
    {
      Update: {
        TableName: tableName,
        Key: transactionKeys.record(token.tenant_id, transaction.id),
        UpdateExpression: "ADD op_count :one",
        ConditionExpression:
          "#state = :open AND expires_epoch > :now AND (attribute_not_exists(op_count) OR op_count < :max)",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: {
          ":one": 1,
          ":open": "open",
          ":now": epochSeconds(now),
          ":max": MAX_TRANSACTION_OPERATIONS,
        },
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: {
          ...transactionKeys.operation(token.tenant_id, transaction.id, token.id),
          entity: "transaction_operation",
          operation,
          token_id: token.id,
          token_type: token.type,
          fingerprint: token.fingerprint,
          ...(previousFingerprint !== undefined && previousFingerprint !== token.fingerprint
            ? { previous_fingerprint: previousFingerprint }
            : {}),
          ...(next ? { next: tokenItem(withoutLock(next)) } : {}),
          key_refs_before: refs.before,
          key_refs_after: refs.after,
          ttl: transaction.expiresEpoch + OPERATION_TTL_SECONDS,
        },
        // One operation per token per transaction.
        ConditionExpression: "attribute_not_exists(PK)",
      },
    },
  ];
}

/** The update that marks a token as held by an open transaction (its current version stays visible meanwhile). */
export function lockUpdate(
  tableName: string,
  key: { PK: string; SK: string },
  transaction: TransactionContext,
  operation: "update" | "delete",
  guard: {
    ConditionExpression: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
  },
) {
  return {
    Update: {
      TableName: tableName,
      Key: key,
      UpdateExpression: "SET txn_id = :txn, txn_op = :op, txn_expires_epoch = :txnExpires",
      ...guard,
      ExpressionAttributeValues: {
        ...guard.ExpressionAttributeValues,
        ":txn": transaction.id,
        ":op": operation,
        ":txnExpires": transaction.expiresEpoch,
      },
    },
  };
}
