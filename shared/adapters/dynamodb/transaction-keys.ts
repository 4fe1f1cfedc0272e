/** A commit is one TransactWriteItems (≤ 100 items): its operations, the record and the audit entry. */
export const MAX_TRANSACTION_OPERATIONS = 90;

/**
 * How long past its transaction's expiry DynamoDB's TTL removes an operation item (a backstop: the commit, the
 * rollback or the sweep removes it first), and the record: a day later, since TTL deletes in any order and op
 * items whose record is gone cannot tell whether they committed (transactions.ts, rollbackExpired).
 */
export const OPERATION_TTL_SECONDS = 7 * 86_400;
export const RECORD_TTL_SECONDS = OPERATION_TTL_SECONDS + 86_400;

export const transactionKeys = {
  record: (tenantId: string, id: string) => ({ PK: `TXN#${tenantId}#${id}`, SK: "META" }),
  operation: (tenantId: string, id: string, tokenId: string) => ({
    PK: `TXN#${tenantId}#${id}`,
    SK: `OP#${tokenId}`,
  }),
} as const;
