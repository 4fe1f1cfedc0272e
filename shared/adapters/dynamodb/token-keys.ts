import { createHash } from "node:crypto";

/** A tenant's token listing is spread over this many GSI1 partitions (write sharding). */
export const TOKEN_SHARDS = 8;
/**
 * Partitions of each hour of the sweep's due index. A tenant's items all go to one (dueShardOf), and the sweep
 * serves the shards in turn (shared/domain/tokens/sweep.ts): one tenant's backlog of due items holds up only the
 * tenants that share its shard. Until 28 Nov 2026 there were 8, a token's shard by its id (sessions and
 * transactions all in shard 0), so a flood of one tenant's items falling due a moment sooner held every other
 * tenant's out of each time-limited run; the sweep reads those older shards too (0–7 are among these).
 */
export const SWEEP_DUE_SHARDS = 32;

/** A stable shard for an id: the same token always lands in the same listing partition. */
export function shardOf(id: string, shards: number): number {
  return createHash("sha256").update(id).digest().readUInt16BE(0) % shards;
}

/** The due-index shard of a tenant's items (tokens, cvcs, sessions, transactions). */
export const dueShardOf = (tenantId: string) => shardOf(tenantId, SWEEP_DUE_SHARDS);

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
