/** A commit is one TransactWriteItems (≤ 100 items): its operations, the record and the audit entry. */
export const MAX_TRANSACTION_OPERATIONS = 90;

export const transactionKeys = {
  record: (tenantId: string, id: string) => ({ PK: `TXN#${tenantId}#${id}`, SK: "META" }),
  operation: (tenantId: string, id: string, tokenId: string) => ({
    PK: `TXN#${tenantId}#${id}`,
    SK: `OP#${tokenId}`,
  }),
} as const;
