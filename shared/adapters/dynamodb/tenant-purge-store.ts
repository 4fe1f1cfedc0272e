import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  BatchWriteCommand,
  DeleteCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { PendingPurge, TenantPurgeStore } from "#shared/ports/tenant-deletion.ts";
import { queryAll } from "./paging.ts";
import { keys } from "./schema.ts";
import { DELETION_PREFIX, deletionKeys, deploymentLogPut } from "./tenant-deletion-store.ts";

/**
 * How a tenant's items are recognised, whatever family they belong to: an exact `tenant_id` attribute (key
 * lookups, sweep entries, nonces), or a partition key whose tenant segment is the tenant's, always with the
 * delimiter after it so an id another tenant chose (a token id equal to this tenant's id) never matches. A new
 * partition family named after the tenant is added here (the purge test scans the whole table to catch one left).
 */
const partitionPrefixes = (tenantId: string) => [
  `TENANT#${tenantId}#`,
  `TOKEN#${tenantId}#`,
  `FP#${tenantId}#`,
  `SESSION#${tenantId}#`,
  `TXN#${tenantId}#`,
  `REACTION#${tenantId}#`,
  `SEARCH#${tenantId}#`,
  `IDEMP#tenant:${tenantId}:`,
  `RATE#tenant#${tenantId}#`,
];
const exactPartitions = (tenantId: string) => [`TENANT#${tenantId}`, `RATE#tenant#${tenantId}`];

/** BatchWriteItem takes 25 requests. */
const BATCH = 25;

const encode = (key: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
const decode = (cursor: string) => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));

/**
 * The purge as table operations: a Scan of the table filtered to the tenant's items, a page at a time (1 MB read
 * each), deleting what it finds. Read cost is the table's size once per deleted tenant (docs/security.md).
 */
export class DynamoTenantPurgeStore implements TenantPurgeStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async pending(): Promise<PendingPurge[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk",
      ExpressionAttributeValues: { ":pk": deletionKeys.pending("").PK },
      ConsistentRead: true,
    });
    return items.map((item) => ({
      tenantId: String(item.SK),
      notBefore: String(item.not_before),
      ...(item.cursor ? { cursor: String(item.cursor) } : {}),
    }));
  }

  async purgePage(tenantId: string, cursor: string | undefined): Promise<{ next?: string; deleted: number }> {
    // Users are not named after the tenant: first, while its members still list them.
    const users = cursor === undefined ? await this.memberUsers(tenantId) : [];
    const values: Record<string, unknown> = { ":tid": tenantId, ":keep": `${DELETION_PREFIX}#` };
    const clauses = ["tenant_id = :tid"];
    exactPartitions(tenantId).forEach((pk, i) => {
      values[`:pk${i}`] = pk;
      clauses.push(`PK = :pk${i}`);
    });
    partitionPrefixes(tenantId).forEach((prefix, i) => {
      values[`:prefix${i}`] = prefix;
      clauses.push(`begins_with(PK, :prefix${i})`);
    });
    const page = await this.client.send(
      new ScanCommand({
        TableName: this.tableName,
        FilterExpression: `(${clauses.join(" OR ")}) AND NOT begins_with(PK, :keep)`,
        ExpressionAttributeValues: values,
        ProjectionExpression: "PK, SK",
        ...(cursor ? { ExclusiveStartKey: decode(cursor) } : {}),
      }),
    );
    // Users carry their tenant's id (found by the scan too) since 28 Nov 2026; older ones only by their members.
    const scanned = (page.Items ?? []).map((item) => ({ PK: String(item.PK), SK: String(item.SK) }));
    const seen = new Set(scanned.map((item) => `${item.PK} ${item.SK}`));
    const doomed = [...users.filter((user) => !seen.has(`${user.PK} ${user.SK}`)), ...scanned];
    await this.deleteAll(doomed);
    return {
      ...(page.LastEvaluatedKey ? { next: encode(page.LastEvaluatedKey) } : {}),
      deleted: doomed.length,
    };
  }

  private async memberUsers(tenantId: string): Promise<{ PK: string; SK: string }[]> {
    const members = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :member)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":member": "MEMBER#" },
      ConsistentRead: true,
    });
    return members
      .map((member) => (member.user as { id?: unknown } | undefined)?.id)
      .filter((id): id is string => typeof id === "string")
      .map((id) => keys.user(id));
  }

  private async deleteAll(doomed: { PK: string; SK: string }[]): Promise<void> {
    for (let i = 0; i < doomed.length; i += BATCH) {
      let requests = doomed.slice(i, i + BATCH).map((key) => ({ DeleteRequest: { Key: key } }));
      // Unprocessed deletes (throttling) are sent again until none is left.
      while (requests.length > 0) {
        const out = await this.client.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
        );
        requests = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      }
    }
  }

  async saveCursor(tenantId: string, cursor: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: deletionKeys.pending(tenantId),
        UpdateExpression: "SET #cursor = :cursor",
        ConditionExpression: "attribute_exists(PK)",
        ExpressionAttributeNames: { "#cursor": "cursor" },
        ExpressionAttributeValues: { ":cursor": cursor },
      }),
    );
  }

  async finish(tenantId: string, at: string, audit: LogEntry): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: deletionKeys.tombstone(tenantId),
        UpdateExpression: "SET purged_at = :at",
        ExpressionAttributeValues: { ":at": at },
      }),
    );
    await this.client.send(new PutCommand(deploymentLogPut(this.tableName, audit).Put));
    await this.client.send(
      new DeleteCommand({ TableName: this.tableName, Key: deletionKeys.pending(tenantId) }),
    );
  }
}
