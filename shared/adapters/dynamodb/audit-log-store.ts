import type { DynamoDBDocumentClient, QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { BatchWriteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry, LogQuery } from "#shared/domain/audit.ts";
import { validationError } from "#shared/domain/errors.ts";
import type { AuditLogStore, PageRequest, StorePage } from "#shared/ports/stores.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { BATCH_WRITE_ITEMS } from "./limits.ts";
import { countQuery, decodeCursor, encodeCursor, queryUpTo } from "./paging.ts";
import { keys, LOG_SHARDS, TABLE_KEYS } from "./schema.ts";

/** Offset paging reads page × size entries from each shard, so it is capped; beyond it, use `start`. */
export const MAX_LOG_OFFSET = 10_000;

export class DynamoAuditLogStore implements AuditLogStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async append(entries: LogEntry[]): Promise<void> {
    // One entry (every read): a PutItem, which fails or succeeds whole; no batch envelope, no unprocessed-items loop.
    const [only] = entries;
    if (only && entries.length === 1) {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: this.audit.item(only) }));
      return;
    }
    for (let i = 0; i < entries.length; i += BATCH_WRITE_ITEMS)
      await this.appendBatch(entries.slice(i, i + BATCH_WRITE_ITEMS));
  }

  private async appendBatch(entries: LogEntry[]): Promise<void> {
    let pending = entries.map((entry) => ({ PutRequest: { Item: this.audit.item(entry) } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 5) throw new Error("Audit log entries could not be written");
      const out = await this.client.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }),
      );
      pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    }
  }

  async list(tenantId: string, query: LogQuery, page: PageRequest): Promise<StorePage<LogEntry>> {
    const cursor = page.start === undefined ? undefined : decodeCursor(page.start);
    if (page.start !== undefined && cursor === undefined)
      throw validationError("The start cursor is invalid.");
    const offset = cursor ? 0 : (page.page - 1) * page.size;
    if (offset + page.size > MAX_LOG_OFFSET)
      throw validationError(
        `Offset paging is limited to the first ${MAX_LOG_OFFSET} entries; use the start cursor from pagination.next.`,
      );

    const lower = query.startDate ?? "0";
    const upperBound = [query.endDate, cursor].filter((v): v is string => v !== undefined).sort()[0] ?? "~";
    const base = (partitionKey: string, byEntity: boolean): QueryCommandInput => ({
      TableName: this.tableName,
      ...(byEntity ? { IndexName: TABLE_KEYS.gsi1Name } : {}),
      KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :lower AND :upper",
      ExpressionAttributeNames: {
        "#pk": byEntity ? TABLE_KEYS.gsi1PartitionKey : TABLE_KEYS.partitionKey,
        "#sk": byEntity ? TABLE_KEYS.gsi1SortKey : TABLE_KEYS.sortKey,
        ...(query.entityType ? { "#et": "entity_type" } : {}),
      },
      ExpressionAttributeValues: {
        ":pk": partitionKey,
        ":lower": lower,
        ":upper": upperBound,
        ...(query.entityType ? { ":et": query.entityType } : {}),
      },
      ...(query.entityType ? { FilterExpression: "#et = :et" } : {}),
      ScanIndexForward: false,
    });
    const partitions =
      query.entityId !== undefined
        ? [base(keys.logEntity(tenantId, query.entityId), true)]
        : Array.from({ length: LOG_SHARDS }, (_, shard) => base(keys.logShard(tenantId, shard), false));

    const wanted = offset + page.size + 1;
    const [chunks, counts] = await Promise.all([
      // A cursor below the range (forged, or from another range) leaves nothing to read: DynamoDB refuses a
      // BETWEEN whose bounds are the wrong way round.
      upperBound < lower ? [] : Promise.all(partitions.map((input) => queryUpTo(this.client, input, wanted))),
      Promise.all(
        partitions.map((input) =>
          countQuery(this.client, {
            ...input,
            ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ":upper": query.endDate ?? "~" },
          }),
        ),
      ),
    ]);
    const merged = chunks
      .flat()
      .filter((item) => item.SK !== cursor && (query.entityId === undefined || item.GSI1SK !== cursor))
      .sort((a, b) => String(b.SK).localeCompare(String(a.SK)));
    const pageItems = merged.slice(offset, offset + page.size);
    const last = pageItems.at(-1);
    return {
      items: pageItems.map((item) => stripKeys<LogEntry>(item)),
      total: counts.reduce((sum, n) => sum + n, 0),
      ...(merged.length > offset + page.size && last ? { next: encodeCursor(String(last.SK)) } : {}),
    };
  }
}
