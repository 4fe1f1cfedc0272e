/**
 * The single table's attribute names (TABLE_KEYS: the local bootstrap, the CDK stack and the adapters must
 * agree on them) and the keys of the entities several adapters share (`keys` below). The keys of one store's
 * own items are built in that store: tokens, fingerprints and sweep buckets in token-store.ts, transactions in
 * transaction-keys.ts, sessions and nonces in session-store.ts, invitations in member-store.ts, proxies in
 * proxy-store.ts, formulas, reactors and reactions in reactor-store.ts, request budgets in request-budget.ts.
 *
 *   TENANT#<tid>              META                      tenant
 *   TENANT#<tid>              APP#<aid>                 application (aid is UUIDv7: sorts by creation)
 *   TENANT#<tid>              APPKEY#<aid>#<kid>        key listing (hash only)
 *   TENANT#<tid>              APPKEYSERIAL#<aid>        an application's key additions, one at a time
 *   TENANT#<tid>              MEMBER#<mid>              tenant member
 *   USER#<uid>                META                      user
 *   APIKEY#<sha256>           META                      key lookup for authentication
 *   TENANT#<tid>#LOG#<shard>  <created_at>#<lid>        audit log, write-sharded; GSI1 by entity id
 *   IDEMP#<scope>#<key hmac>  META                      idempotency record (the key as a keyed digest)
 *   SYSTEM#MASTERKEY          CHECK                     local master key's check value (master-key-check.ts)
 *   SYSTEM#IDEMPOTENCY        KEYED_SINCE               when idempotency keys were first kept as digests
 *   TENANT#<tid>              KEYCUSTODY                the tenant's own KMS key (key-custody-store.ts)
 *   TENANTDELETION#<tid>      META | LOG#…              a deleted tenant's tombstone and audit (tenant-deletion-store.ts)
 */
export const TABLE_KEYS = {
  partitionKey: "PK",
  sortKey: "SK",
  gsi1Name: "GSI1",
  gsi1PartitionKey: "GSI1PK",
  gsi1SortKey: "GSI1SK",
  ttlAttribute: "ttl",
} as const;

/** Audit entries of one tenant spread over this many partitions, so a busy tenant is not one hot key. */
export const LOG_SHARDS = 4;

/**
 * Set on a member's item once its deletion begins: from then no key is minted through the member and its keys stop
 * answering, so the deletion's listing of them ends however fast a hostile member mints (member-store.ts).
 */
export const DELETION_STARTED = "deletion_started";

export const keys = {
  tenant: (tenantId: string) => ({ PK: `TENANT#${tenantId}`, SK: "META" }),
  user: (userId: string) => ({ PK: `USER#${userId}`, SK: "META" }),
  member: (tenantId: string, memberId: string) => ({ PK: `TENANT#${tenantId}`, SK: `MEMBER#${memberId}` }),
  application: (tenantId: string, appId: string) => ({ PK: `TENANT#${tenantId}`, SK: `APP#${appId}` }),
  applicationKey: (tenantId: string, appId: string, keyId: string) => ({
    PK: `TENANT#${tenantId}`,
    SK: `APPKEY#${appId}#${keyId}`,
  }),
  /** Counts an application's key additions: each is conditional on the count it read, so they run one at a time. */
  applicationKeySerial: (tenantId: string, appId: string) => ({
    PK: `TENANT#${tenantId}`,
    SK: `APPKEYSERIAL#${appId}`,
  }),
  apiKey: (keyHash: string) => ({ PK: `APIKEY#${keyHash}`, SK: "META" }),
  logShard: (tenantId: string, shard: number) => `TENANT#${tenantId}#LOG#${shard}`,
  logEntity: (tenantId: string, entityId: string) => `TENANT#${tenantId}#LOGENTITY#${entityId}`,
  idempotency: (scope: string, key: string) => ({ PK: `IDEMP#${scope}#${key}`, SK: "META" }),
  masterKeyCheck: { PK: "SYSTEM#MASTERKEY", SK: "CHECK" },
  idempotencyFormat: { PK: "SYSTEM#IDEMPOTENCY", SK: "KEYED_SINCE" },
} as const;

export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
