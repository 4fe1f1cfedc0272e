import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import { type KeyedToken, keyRefDelta } from "#shared/domain/keys/key-refs.ts";
import type { DueCursor, DueItem, SweepStore } from "#shared/ports/sweep-store.ts";
import type { AuditItems } from "./audit-items.ts";
import { isConditionalCheckFailed, transactOrFalse } from "./client.ts";
import { releaseFingerprint } from "./fingerprint-claims.ts";
import { keyCountUpdates } from "./key-counters.ts";
import { epochSeconds } from "./schema.ts";
import { removeSearchEntries } from "./search-index.ts";
import { SWEEP_SHARDS, tokenKeys } from "./token-keys.ts";

const STATE_KEY = { PK: "SWEEPSTATE", SK: "META" };
/** Due items read at once: a page is handled before the next is read, so a run holds a page, not a bucket. */
const DUE_PAGE_ITEMS = 500;

/** The sweep's view of the table: hour buckets of due items, and the conditional removals they lead to. */
export class DynamoSweepStore implements SweepStore {
  readonly shards = SWEEP_SHARDS;

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
      .catch((error: unknown) => {
        if (!isConditionalCheckFailed(error)) throw error;
      });
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
    }));
    const next = page.LastEvaluatedKey as DueCursor | undefined;
    return next ? { items, next } : { items };
  }

  async done(item: DueItem): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: item.key }));
  }

  async expireToken(
    item: DueItem,
    now: Date,
    audit: LogEntry,
  ): Promise<{ type: string; fingerprint: string } | undefined> {
    const key = tokenKeys.token(item.tenantId, item.tokenId);
    const current = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    if (!current.Item) return undefined;
    const written = await transactOrFalse(this.client, [
      {
        // Only if it is still expired: a PATCH may have moved its expiry since the entry was written. And only
        // the version read, so the key counters lose what this very version needed (else: next sweep run).
        Delete: {
          TableName: this.tableName,
          Key: key,
          ConditionExpression: "expires_epoch <= :now AND #version = :version",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":now": epochSeconds(now), ":version": current.Item.version },
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
    if (!written) return undefined;
    const hashes = current.Item.search_hashes;
    if (Array.isArray(hashes) && hashes.length)
      await removeSearchEntries(
        this.client,
        this.tableName,
        { tenant_id: item.tenantId, id: item.tokenId },
        hashes.map(String),
      );
    return { type: String(current.Item.type), fingerprint: String(current.Item.fingerprint) };
  }

  async removeCvc(item: DueItem, now: Date): Promise<void> {
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: tokenKeys.token(item.tenantId, item.tokenId),
          UpdateExpression: "REMOVE sealed_cvc, cvc_expires_at",
          ConditionExpression: "attribute_exists(PK) AND cvc_expires_at <= :now",
          ExpressionAttributeValues: { ":now": now.toISOString() },
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionalCheckFailed(error)) throw error;
      });
  }

  releaseFingerprint(tenantId: string, type: string, fingerprint: string, tokenId: string): Promise<void> {
    return releaseFingerprint(this.client, this.tableName, { tenantId, type, fingerprint, tokenId });
  }
}
