import { shardOf } from "./token-keys.ts";

/**
 * Per-key token counters (shared/domain/keys/key-refs.ts), kept in the same TransactWriteItems as the token writes
 * they count. Write-sharded: every token write of a busy tenant would otherwise update one item (one partition's
 * throughput, and transaction conflicts between concurrent writes). A key's count is the sum of its shards.
 */
export const KEY_COUNT_SHARDS = 16;

export const keyCountKeys = {
  shard: (tenantId: string, ref: string, shard: number) => ({
    PK: `TENANT#${tenantId}`,
    SK: `KEYUSE#${ref}#${shard}`,
  }),
  /** The key version's own item: when it was made, whether its tokens were counted from the start, its end. */
  version: (tenantId: string, ref: string) => ({ PK: `TENANT#${tenantId}`, SK: `KEYVER#${ref}` }),
} as const;

/** True for a transaction item that is a key counter's update (its shard's sort key). */
export function isKeyCountUpdate(item: unknown): boolean {
  const key = (item as { Update?: { Key?: { SK?: unknown } } } | undefined)?.Update?.Key;
  return typeof key?.SK === "string" && key.SK.startsWith("KEYUSE#");
}

/**
 * The counter updates of one write (each counter item once). `seed` picks the shard (a token id: the same token
 * always counts in the same shard). A key's destruction marks every shard destroyed, and an increment requires
 * that mark absent: a write can never make a token need a destroyed key.
 */
export function keyCountUpdates(
  tableName: string,
  tenantId: string,
  delta: Map<string, number>,
  seed: string,
) {
  const shard = shardOf(seed, KEY_COUNT_SHARDS);
  return [...delta].map(([ref, n]) => ({
    Update: {
      TableName: tableName,
      Key: keyCountKeys.shard(tenantId, ref, shard),
      UpdateExpression: "ADD #tokens :n SET entity = :entity, key_id = :ref",
      ...(n > 0 ? { ConditionExpression: "attribute_not_exists(destroyed_at)" } : {}),
      ExpressionAttributeNames: { "#tokens": "tokens" },
      ExpressionAttributeValues: { ":n": n, ":entity": "key_use", ":ref": ref },
    },
  }));
}
