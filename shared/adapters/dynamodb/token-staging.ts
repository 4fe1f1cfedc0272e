import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import { keyRefDelta, sumDeltas } from "#shared/domain/keys/key-refs.ts";
import type { StoredToken, TransactionContext } from "#shared/domain/tokens/token.ts";
import type { CreateManyOutcome, StagedCreate, StageOutcome } from "#shared/ports/stores.ts";
import type { AuditItems } from "./audit-items.ts";
import { fingerprintClaimItem } from "./fingerprint-claims.ts";
import { keyCountUpdates } from "./key-counters.ts";
import { OWN_TRANSACT_ITEMS, PACK_BYTES, utf8Bytes } from "./limits.ts";
import { epochSeconds } from "./schema.ts";
import { tokenSearchPuts } from "./search-index.ts";
import { tokenSweepPuts } from "./sweep-index.ts";
import { tokenItem } from "./token-items.ts";
import { tokenKeys } from "./token-keys.ts";
import { transactionWrites } from "./token-transaction-writes.ts";
import { transactionKeys } from "./transaction-keys.ts";

type Item = Record<string, unknown>;
/** What an item of a staging write is, so a cancellation reason names the entry it refused. */
type Role = { entry: number; role: "token" | "claim" | "other" } | { entry: -1; role: "record" | "counter" };

/** A claim's owner: its id when it is a live token holding this fingerprint, else undefined (released). */
export type ClaimOwner = (token: StoredToken) => Promise<string | undefined>;

/**
 * The entry's writes, as a single create writes them: the token, its claim when it deduplicates, its sweep
 * entries; in a transaction the token is locked and its operation item added (the record is counted once).
 */
function entryItems(
  tableName: string,
  entry: StagedCreate,
  transaction: TransactionContext | undefined,
  now: Date,
) {
  // Locked by the transaction: invisible (and unwritable) to everyone until it commits.
  const token: StoredToken = transaction
    ? {
        ...entry.token,
        lock: {
          transactionId: transaction.id,
          operation: "create",
          expiresEpoch: transaction.expiresEpoch,
          ...(transaction.batchAnswerBy ? { batchAnswerBy: transaction.batchAnswerBy } : {}),
        },
      }
    : entry.token;
  const items: { item: Item; role: "token" | "claim" | "other" }[] = [
    {
      item: {
        Put: {
          TableName: tableName,
          Item: tokenItem(token),
          ConditionExpression: "attribute_not_exists(PK)",
        },
      },
      role: "token",
    },
  ];
  if (entry.deduplicate)
    items.push({
      item: {
        Put: {
          TableName: tableName,
          Item: fingerprintClaimItem(
            tokenKeys.fingerprint(token.tenant_id, token.type, token.fingerprint),
            token.id,
          ),
          ConditionExpression: "attribute_not_exists(PK)",
        },
      },
      role: "claim",
    });
  for (const put of tokenSweepPuts(tableName, token)) items.push({ item: put, role: "other" });
  for (const put of tokenSearchPuts(tableName, token)) items.push({ item: put, role: "other" });
  if (transaction) {
    const [, operation] = transactionWrites(tableName, token, transaction, "create", now);
    items.push({ item: operation as Item, role: "other" });
  }
  return items;
}

/** The record's update of one staging write: still open and unexpired, counting the operations it adds. */
function recordUpdate(
  tableName: string,
  tenantId: string,
  transaction: TransactionContext,
  count: number,
  now: Date,
) {
  return {
    Update: {
      TableName: tableName,
      Key: transactionKeys.record(tenantId, transaction.id),
      UpdateExpression: "ADD op_count :count",
      ConditionExpression: "#state = :open AND expires_epoch > :now",
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: { ":count": count, ":open": "open", ":now": epochSeconds(now) },
    },
  };
}

interface Packed {
  items: Item[];
  roles: Role[];
  /** The first entry not packed. */
  end: number;
  count: number;
}

/** Entries from `from` on (duplicates left out) packed into one TransactWriteItems, as many as fit. */
function pack(
  tableName: string,
  audit: AuditItems,
  entries: StagedCreate[],
  duplicates: Record<number, string>,
  from: number,
  transaction: TransactionContext | undefined,
  now: Date,
): Packed {
  const items: Item[] = [];
  const roles: Role[] = [];
  // The record's update, in a transaction.
  const reserved = transaction ? 1 : 0;
  let end = from;
  let count = 0;
  // The key counters of the tokens packed: one update per key, after them.
  let keys = new Map<string, number>();
  let bytes = 0;
  for (; end < entries.length; end++) {
    const entry = entries[end] as StagedCreate;
    if (duplicates[end] !== undefined) continue;
    const own = entryItems(tableName, entry, transaction, now);
    const withEntry = sumDeltas([keys, keyRefDelta(undefined, entry.token)]);
    // DynamoDB's 4 MB a write: the body limit bounds a batch today, a larger one must not break.
    const ownBytes = utf8Bytes([own, entry.audit]);
    // +1 for the entry's audit entry.
    if (items.length + own.length + 1 + reserved + withEntry.size > OWN_TRANSACT_ITEMS) break;
    if (count > 0 && bytes + ownBytes > PACK_BYTES) break;
    bytes += ownBytes;
    keys = withEntry;
    for (const { item, role } of own) {
      items.push(item);
      roles.push({ entry: end, role });
    }
    items.push(audit.put(entry.audit));
    roles.push({ entry: end, role: "other" });
    count++;
  }
  if (count > 0) {
    const first = entries[from] as StagedCreate;
    for (const update of keyCountUpdates(tableName, first.token.tenant_id, keys, first.token.id)) {
      items.push(update);
      roles.push({ entry: -1, role: "counter" });
    }
  }
  if (transaction && count > 0) {
    const tenantId = (entries[from] as StagedCreate).token.tenant_id;
    items.push(recordUpdate(tableName, tenantId, transaction, count, now));
    roles.push({ entry: -1, role: "record" });
  }
  return { items, roles, end, count };
}

type Refusal = StageOutcome | "retry";

/**
 * What a cancelled write's conditions say: the transaction closed, an id taken, or fingerprints claimed (each
 * resolved to its live owner, a duplicate, or released as stale): then the write is tried again without them.
 */
async function refusal(
  error: unknown,
  roles: Role[],
  entries: StagedCreate[],
  duplicates: Record<number, string>,
  claimOwner: ClaimOwner,
): Promise<Refusal> {
  const reasons = cancellationCodes(error);
  if (!reasons) throw error;
  const refused = reasons.flatMap((code, i) => (code === "ConditionalCheckFailed" ? [roles[i] as Role] : []));
  if (refused.length === 0) throw error;
  if (refused.some((r) => r.role === "record")) return { outcome: "transaction-closed" };
  // A key destroyed under the write (a process still sealing under it): nothing to retry here.
  if (refused.some((r) => r.role === "counter")) throw error;
  const taken = refused.find((r) => r.role === "token");
  if (taken) return { outcome: "id-taken", index: taken.entry };
  for (const claim of refused) {
    const owner = await claimOwner((entries[claim.entry] as StagedCreate).token);
    if (owner !== undefined) duplicates[claim.entry] = owner;
  }
  return "retry";
}

/** As a single create gives up on a claim that keeps changing under it. */
const CLAIM_ATTEMPTS = 4;

/**
 * Creates tokens in one TransactWriteItems, each with what a single create writes (the token, its claim when it
 * deduplicates, its sweep entries, its audit entry): visible all at once or not at all. Entries in `skip` (known
 * duplicates) are left out. Nothing is written when they do not fit one write (`too-large`: stage them in a
 * transaction instead), nor when a deduplicating entry's fingerprint is claimed (`claimed`: each such entry's
 * live owner; a stale claim is released): the caller decides on those owners and calls again.
 */
export async function createAtOnce(
  client: DynamoDBDocumentClient,
  tableName: string,
  audit: AuditItems,
  entries: StagedCreate[],
  skip: Record<number, string>,
  now: Date,
  claimOwner: ClaimOwner,
): Promise<CreateManyOutcome> {
  const found: Record<number, string> = { ...skip };
  const packed = pack(tableName, audit, entries, found, 0, undefined, now);
  if (packed.end < entries.length) return { outcome: "too-large" };
  if (packed.count === 0) return { outcome: "written", duplicates: {} };
  try {
    await client.send(new TransactWriteCommand({ TransactItems: packed.items as never }));
    return { outcome: "written", duplicates: {} };
  } catch (error) {
    const refused = await refusal(error, packed.roles, entries, found, claimOwner);
    if (refused !== "retry") return refused;
    const duplicates = Object.fromEntries(
      Object.entries(found).filter(([i]) => skip[Number(i)] === undefined),
    );
    return { outcome: "claimed", duplicates };
  }
}

/**
 * Writes tokens pending in an open transaction, each with what a single create in a transaction writes (the token
 * locked, its claim when it deduplicates, its sweep entries, its operation item, its audit entry), packed into as
 * few TransactWriteItems as fit. Nothing of it is visible before the transaction commits. A deduplicating entry
 * whose fingerprint a live token holds is left out and reported as that token; an id taken or a closed
 * transaction stops the staging (what was staged stays pending, for the caller to roll back).
 */
export async function stageCreates(
  client: DynamoDBDocumentClient,
  tableName: string,
  audit: AuditItems,
  entries: StagedCreate[],
  transaction: TransactionContext,
  now: Date,
  claimOwner: ClaimOwner,
): Promise<StageOutcome> {
  const duplicates: Record<number, string> = {};
  let next = 0;
  let attempts = 0;
  while (next < entries.length) {
    const packed = pack(tableName, audit, entries, duplicates, next, transaction, now);
    if (packed.count === 0) {
      next = packed.end;
      continue;
    }
    try {
      await client.send(new TransactWriteCommand({ TransactItems: packed.items as never }));
      next = packed.end;
      attempts = 0;
    } catch (error) {
      const refused = await refusal(error, packed.roles, entries, duplicates, claimOwner);
      if (refused !== "retry") return refused;
      if (++attempts >= CLAIM_ATTEMPTS) throw new Error("Could not claim the token fingerprints");
    }
  }
  return { outcome: "written", duplicates };
}
