import { randomInt } from "node:crypto";
import type { LogEntry } from "#shared/domain/audit.ts";
import { keys, LOG_SHARDS } from "./schema.ts";

/** Builds the stored form of an audit entry, so every write can put it in its own transaction. */
export class AuditItems {
  constructor(
    private readonly tableName: string,
    private readonly retentionDays: number,
  ) {}

  item(entry: LogEntry): Record<string, unknown> {
    const sortKey = `${entry.created_at}#${entry.id}`;
    const expiresAt = Math.floor(Date.parse(entry.created_at) / 1000) + this.retentionDays * 86_400;
    return {
      PK: keys.logShard(entry.tenant_id, randomInt(LOG_SHARDS)),
      SK: sortKey,
      GSI1PK: keys.logEntity(entry.tenant_id, entry.entity_id),
      GSI1SK: sortKey,
      ttl: expiresAt,
      ...entry,
    };
  }

  put(entry: LogEntry) {
    return { Put: { TableName: this.tableName, Item: this.item(entry) } };
  }
}

const STORE_ATTRIBUTES = ["PK", "SK", "GSI1PK", "GSI1SK", "ttl", "entity"] as const;

/**
 * Removes the store's own attributes from an item before it becomes a domain object, and `storeOnly`: the
 * entity's attributes that exist for the store alone (expiry epochs, hashes kept for lookups).
 */
export function stripKeys<T>(item: Record<string, unknown>, storeOnly: readonly string[] = []): T {
  const copy = { ...item };
  for (const attribute of [...STORE_ATTRIBUTES, ...storeOnly]) delete copy[attribute];
  return copy as T;
}
