import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import { type KeyedToken, keyRefDelta } from "#shared/domain/keys/key-refs.ts";
import type { DueCursor, DueItem, Expiry, SweepStore } from "#shared/ports/sweep-store.ts";
import type { AuditItems } from "./audit-items.ts";
import { ignoreConditionFailed, transactOrFalse } from "./client.ts";
import { releaseFingerprint } from "./fingerprint-claims.ts";
import { keyCountUpdates } from "./key-counters.ts";
import { epochSeconds } from "./schema.ts";
import { removeDroppedSearchEntries } from "./search-index.ts";
import { sweepEntryPut } from "./sweep-index.ts";
import { SWEEP_DUE_SHARDS, tokenKeys } from "./token-keys.ts";
import { LOCK_FREE } from "./token-transaction-writes.ts";
import { transactionKeys } from "./transaction-keys.ts";

const STATE_KEY = { PK: "SWEEPSTATE", SK: "META" };
/** Tries to delete an expired token that keeps being written to between the read and the delete. */
const EXPIRE_ATTEMPTS = 5;
/** Due items read at once: a page is handled before the next is read, so a run holds a page, not a bucket. */
const DUE_PAGE_ITEMS = 500;

/** The sweep's view of the table: hour buckets of due items, and the conditional removals they lead to. */
/** Not a create pending in a transaction (whatever its hold): only its commit or rollback ends that. */
const NOT_PENDING = "(attribute_not_exists(txn_op) OR txn_op <> :create)";
/** How soon the sweep looks again at an expired create pending in a lapsed transaction (its rollback is due). */
const PENDING_CREATE_RECHECK_SECONDS = 300;

export class DynamoSweepStore implements SweepStore {
  readonly shards = SWEEP_DUE_SHARDS;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async lastCompletedHour(): Promise<string | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: STATE_KEY, ConsistentRead: true }),
    );
    return out.Item?.last_completed_hour as string | undefined;
  }

  async setLastCompletedHour(hour: string): Promise<void> {
    await this.client
      .send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...STATE_KEY, entity: "sweep_state", last_completed_hour: hour },
          // Two sweeps racing never move the mark backwards.
          ConditionExpression: "attribute_not_exists(last_completed_hour) OR last_completed_hour < :hour",
          ExpressionAttributeValues: { ":hour": hour },
        }),
      )
      .catch(ignoreConditionFailed);
  }

  async due(hour: Date, shard: number, after?: DueCursor): Promise<{ items: DueItem[]; next?: DueCursor }> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: { ":pk": tokenKeys.sweepBucket(hour, shard) },
        Limit: DUE_PAGE_ITEMS,
        ...(after ? { ExclusiveStartKey: after } : {}),
      }),
    );
    const items = (page.Items ?? []).map((item) => ({
      key: { PK: String(item.PK), SK: String(item.SK) },
      kind: item.kind as DueItem["kind"],
      tenantId: String(item.tenant_id),
      tokenId: String(item.token_id),
      tokenType: item.token_type as DueItem["tokenType"],
      dueAt: String(item.due_at),
      ...(item.attempts ? { attempts: Number(item.attempts) } : {}),
    }));
    const next = page.LastEvaluatedKey as DueCursor | undefined;
    return next ? { items, next } : { items };
  }

  async done(item: DueItem): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: item.key }));
  }

  async defer(item: DueItem, dueAt: Date, attempts = item.attempts): Promise<void> {
    const { kind, tenantId, tokenId: entityId, tokenType } = item;
    const entry = { kind, tenantId, entityId, tokenType, dueAt: dueAt.toISOString(), attempts };
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          sweepEntryPut(this.tableName, entry),
          { Delete: { TableName: this.tableName, Key: item.key } },
        ],
      }),
    );
  }

  /**
   * Deletes the token if it is still expired. A write between the read and the delete (a rewrap's reseal, a
   * PATCH) fails the delete's version condition: read again and retry while the token is still expired, since
   * the caller then drops the due entry (a rewrap re-puts the same entry: dropped after one conflict, the token
   * stayed until the TTL backstop, 49 h; review of 27 Nov 2026).
   */
  async expireToken(item: DueItem, now: Date, audit: LogEntry): Promise<Expiry> {
    for (let attempt = 0; attempt < EXPIRE_ATTEMPTS; attempt++) {
      const outcome = await this.expireOnce(item, now, audit);
      if (outcome !== "changed") return outcome;
    }
    return undefined; // written to at every try: the TTL backstop removes it (docs/operations.md)
  }

  private async expireOnce(item: DueItem, now: Date, audit: LogEntry): Promise<Expiry | "changed"> {
    const key = tokenKeys.token(item.tenantId, item.tokenId);
    const current = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    if (!current.Item) return undefined;
    // An open transaction holds it: its commit or rollback decides (a commit may extend it, or set an expiry
    // already past whose own entry fell due first), then the sweep looks again.
    const heldUntil = Number(current.Item.txn_expires_epoch);
    if (current.Item.txn_id !== undefined && heldUntil > epochSeconds(now))
      return { heldUntil: new Date(heldUntil * 1000) };
    // A create still pending in a transaction whose hold lapsed is the rollback's to remove (with its count):
    // deleted here too, its count went twice. Looked at again later, in case a staged commit unlocks it.
    if (current.Item.txn_op === "create")
      return { heldUntil: new Date(now.getTime() + PENDING_CREATE_RECHECK_SECONDS * 1000) };
    const expired = Number(current.Item.expires_epoch) <= epochSeconds(now);
    if (!expired) return undefined; // a PATCH moved its expiry since the entry was written
    // A lapsed lock whose transaction still has this token's operation item has not finished with it: committed
    // past its commit point (its staged version, perhaps a later expiry or none, is still to be rolled forward),
    // or expired open (to roll back). The transaction decides first: deleting the old version here lost a token
    // whose commit had passed its commit point (its roll-forward then skipped the missing token). Checked again
    // in the delete itself (the op item must still be absent).
    const txnId = typeof current.Item.txn_id === "string" ? current.Item.txn_id : undefined;
    const operation = txnId && transactionKeys.operation(item.tenantId, txnId, item.tokenId);
    if (operation) {
      const pending = await this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: operation,
          ConsistentRead: true,
          ProjectionExpression: "PK",
        }),
      );
      if (pending.Item)
        return {
          heldUntil: new Date(now.getTime() + PENDING_CREATE_RECHECK_SECONDS * 1000),
          transactionId: txnId,
        };
    }
    const written = await transactOrFalse(this.client, [
      ...(operation
        ? [
            {
              ConditionCheck: {
                TableName: this.tableName,
                Key: operation,
                ConditionExpression: "attribute_not_exists(PK)",
              },
            },
          ]
        : []),
      {
        // Only if it is still expired, and only the version read, so the key counters lose what this very
        // version needed.
        Delete: {
          TableName: this.tableName,
          Key: key,
          ConditionExpression: `expires_epoch <= :now AND #version = :version AND ${LOCK_FREE} AND ${NOT_PENDING}`,
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: {
            ":now": epochSeconds(now),
            ":version": current.Item.version,
            ":create": "create",
          },
        },
      },
      { Delete: { TableName: this.tableName, Key: item.key } },
      ...keyCountUpdates(
        this.tableName,
        item.tenantId,
        keyRefDelta(current.Item as unknown as KeyedToken, undefined),
        item.tokenId,
      ),
      this.audit.put(audit),
    ]);
    if (!written) return "changed";
    const hashes = current.Item.search_hashes;
    if (Array.isArray(hashes) && hashes.length)
      await removeDroppedSearchEntries(
        this.client,
        this.tableName,
        { tenant_id: item.tenantId, id: item.tokenId },
        hashes.map(String),
      );
    return { type: String(current.Item.type), fingerprint: String(current.Item.fingerprint) };
  }

  async removeCvc(item: DueItem, now: Date): Promise<void> {
    const key = tokenKeys.token(item.tenantId, item.tokenId);
    // The token's removal requires the hold it read (none, or that transaction's): a transaction that staged the
    // token in between (its op item a copy with this cvc) fails it, and the next try cleans that op item too.
    for (let attempt = 0; attempt < EXPIRE_ATTEMPTS; attempt++) {
      // A transaction holding the token staged a copy of it in its operation item, cvc included: that copy's cvc
      // goes first (a crash between the two leaves the token's, and so this entry, for the next run).
      const held = await this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: key,
          ConsistentRead: true,
          ProjectionExpression: "txn_id, cvc_expires_at",
        }),
      );
      if (!held.Item) return;
      const txnId = held.Item.txn_id;
      const holder = typeof txnId === "string" ? txnId : undefined;
      if (holder)
        await this.client
          .send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: transactionKeys.operation(item.tenantId, holder, item.tokenId),
              UpdateExpression: "REMOVE #next.sealed_cvc, #next.cvc_expires_at",
              ConditionExpression: "attribute_exists(PK) AND #next.cvc_expires_at <= :now",
              ExpressionAttributeNames: { "#next": "next" },
              ExpressionAttributeValues: { ":now": now.toISOString() },
            }),
          )
          .catch(ignoreConditionFailed);
      const end = held.Item.cvc_expires_at;
      if (typeof end !== "string" || end > now.toISOString()) return; // gone, or a new cvc's later hour
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key,
            // The version stays: an idempotent replay of the token's creation still answers it, without the cvc
            // (docs/security.md); a PATCH or reseal that read the cvc just before cannot write it back (replaceGuard).
            UpdateExpression: "REMOVE sealed_cvc, cvc_expires_at",
            ConditionExpression: `attribute_exists(PK) AND cvc_expires_at <= :now AND ${
              holder ? "txn_id = :txn" : "attribute_not_exists(txn_id)"
            }`,
            ExpressionAttributeValues: { ":now": now.toISOString(), ...(holder ? { ":txn": holder } : {}) },
          }),
        );
        return;
      } catch (error) {
        ignoreConditionFailed(error); // held by another transaction since the read (or the cvc changed): again
      }
    }
    throw new Error("the token's hold kept changing"); // put off: retried later, the entry kept
  }

  releaseFingerprint(tenantId: string, type: string, fingerprint: string, tokenId: string): Promise<void> {
    return releaseFingerprint(this.client, this.tableName, { tenantId, type, fingerprint, tokenId });
  }
}
