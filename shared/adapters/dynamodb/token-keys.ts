import { createHash } from "node:crypto";

/** A tenant's token listing is spread over this many GSI1 partitions (write sharding). */
export const TOKEN_SHARDS = 8;
export const SWEEP_SHARDS = 8;

/** A stable shard for an id: the same token always lands in the same listing and sweep partition. */
export function shardOf(id: string, shards: number): number {
  return createHash("sha256").update(id).digest().readUInt16BE(0) % shards;
}

export const tokenKeys = {
  token: (tenantId: string, id: string) => ({ PK: `TOKEN#${tenantId}#${id}`, SK: "META" }),
  listing: (tenantId: string, shard: number) => `TENANT#${tenantId}#TOKENS#${shard}`,
  fingerprint: (tenantId: string, type: string, fingerprint: string) => ({
    PK: `FP#${tenantId}#${type}#${fingerprint}`,
    SK: "META",
  }),
  /** Hour bucket of the sweep index: tokens (T) and cvcs (C) due in that hour. */
  sweepBucket: (at: Date, shard: number) => `SWEEP#${at.toISOString().slice(0, 13)}#${shard}`,
} as const;
