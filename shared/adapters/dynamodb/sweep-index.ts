import type { StoredToken } from "#shared/domain/tokens/token.ts";
import { epochSeconds } from "./schema.ts";
import { dueShardOf, tokenKeys } from "./token-keys.ts";

/**
 * One entry of the sweep index: something of a tenant that falls due at `dueAt` — a token's expiry (T), a cvc's
 * end (C), an open transaction's expiry (X) or a session's (S). The sweep reads these by hour bucket.
 */
export function sweepEntryPut(
  tableName: string,
  entry: {
    kind: "T" | "C" | "X" | "S";
    tenantId: string;
    entityId: string;
    tokenType?: string;
    dueAt: string;
    /** Failures so far (sweep.ts puts a failing item off longer each time). */
    attempts?: number | undefined;
  },
) {
  return {
    Put: {
      TableName: tableName,
      Item: {
        PK: tokenKeys.sweepBucket(new Date(entry.dueAt), dueShardOf(entry.tenantId)),
        // Due time first: a shard is read in the order its items fall due, whichever tenant's (sweep.ts).
        SK: `${entry.dueAt}#${entry.kind}#${entry.tenantId}#${entry.entityId}`,
        entity: "sweep",
        kind: entry.kind,
        tenant_id: entry.tenantId,
        token_id: entry.entityId,
        token_type: entry.tokenType ?? "token",
        due_at: entry.dueAt,
        ttl: epochSeconds(new Date(entry.dueAt)) + 7 * 86_400,
        ...(entry.attempts ? { attempts: entry.attempts } : {}),
      },
    },
  };
}

/** Index entries that let the sweep find what falls due: the token's expiry and its cvc's. */
export function tokenSweepPuts(tableName: string, token: StoredToken) {
  const due: ["T" | "C", string][] = [];
  if (token.expires_at) due.push(["T", token.expires_at]);
  if (token.sealed_cvc && token.cvc_expires_at) due.push(["C", token.cvc_expires_at]);
  return due.map(([kind, dueAt]) =>
    sweepEntryPut(tableName, {
      kind,
      tenantId: token.tenant_id,
      entityId: token.id,
      tokenType: token.type,
      dueAt,
    }),
  );
}
