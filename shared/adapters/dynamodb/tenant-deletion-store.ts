import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import { logger } from "#shared/logger.ts";
import type { TenantDeletionStore, TenantTombstone } from "#shared/ports/tenant-deletion.ts";
import type { AuditItems } from "./audit-items.ts";
import { transactOrFalse } from "./client.ts";
import { OWN_TRANSACT_ITEMS } from "./limits.ts";
import { queryAll } from "./paging.ts";

/**
 * The sort-key prefixes of a tenant's key items in its partition: wrapped data keys and HMAC keys
 * (data-key-store.ts). Whatever holds key material of a tenant is listed here, so the shred destroys it.
 */
export const KEY_ITEM_PREFIXES = ["DATAKEY#"] as const;

/**
 * Deployment-level records of tenant deletion, outside every tenant's partition (the purge leaves them):
 *   TENANTDELETION#<tid>       META                   the tombstone with the signed receipt
 *   TENANTDELETION#<tid>       LOG#<at>#<entry id>    the deletion's audit entries, kept for good
 *   TENANTDELETION#PENDING     <tid>                  a purge still to do (the sweep's work list)
 */
export const DELETION_PREFIX = "TENANTDELETION";
export const deletionKeys = {
  tombstone: (tenantId: string) => ({ PK: `${DELETION_PREFIX}#${tenantId}`, SK: "META" }),
  log: (entry: LogEntry) => ({
    PK: `${DELETION_PREFIX}#${entry.tenant_id}`,
    SK: `LOG#${entry.created_at}#${entry.id}`,
  }),
  pending: (tenantId: string) => ({ PK: `${DELETION_PREFIX}#PENDING`, SK: tenantId }),
} as const;

/** A deletion's audit entry at the deployment level: no TTL, no GSI keys; it outlives the tenant's own log. */
export const deploymentLogPut = (tableName: string, entry: LogEntry) => ({
  Put: { TableName: tableName, Item: { ...deletionKeys.log(entry), entity: "deployment_log", ...entry } },
});

export class DynamoTenantDeletionStore implements TenantDeletionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async isDeleted(tenantId: string): Promise<boolean> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: deletionKeys.tombstone(tenantId),
        ConsistentRead: true,
        ProjectionExpression: "PK",
      }),
    );
    return out.Item !== undefined;
  }

  async getTombstone(tenantId: string): Promise<TenantTombstone | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: deletionKeys.tombstone(tenantId),
        ConsistentRead: true,
      }),
    );
    if (!out.Item) return undefined;
    return {
      tenant_id: String(out.Item.tenant_id),
      receipt: out.Item.receipt as TenantTombstone["receipt"],
      ...(out.Item.purged_at ? { purged_at: String(out.Item.purged_at) } : {}),
    };
  }

  private async keyItems(tenantId: string): Promise<{ PK: string; SK: string }[]> {
    const found = await Promise.all(
      KEY_ITEM_PREFIXES.map((prefix) =>
        queryAll(this.client, {
          TableName: this.tableName,
          KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
          ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": prefix },
          ProjectionExpression: "PK, SK",
          ConsistentRead: true,
        }),
      ),
    );
    return found.flat().map((item) => ({ PK: String(item.PK), SK: String(item.SK) }));
  }

  async keyVersions(tenantId: string): Promise<string[]> {
    return (await this.keyItems(tenantId)).map((item) => item.SK.slice(item.SK.indexOf("#") + 1)).sort();
  }

  async shred(input: Parameters<TenantDeletionStore["shred"]>[0]): Promise<boolean> {
    const tenantId = input.tombstone.tenant_id;
    const deletes = (await this.keyItems(tenantId)).map((key) => ({
      Delete: { TableName: this.tableName, Key: key },
    }));
    const head = [
      {
        Put: {
          TableName: this.tableName,
          Item: { ...deletionKeys.tombstone(tenantId), entity: "tenant_tombstone", ...input.tombstone },
          ConditionExpression: "attribute_not_exists(PK)",
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: {
            ...deletionKeys.pending(tenantId),
            entity: "tenant_purge",
            not_before: input.purgeNotBefore,
          },
        },
      },
      ...input.audit.flatMap((entry) => [this.audit.put(entry), deploymentLogPut(this.tableName, entry)]),
    ];
    // The tombstone decides (no key is served once it exists); the audit entries and key items go with it, as
    // many as fit, the audit entries first (the record of what was destroyed).
    const rest = [...input.keyAudit.map((entry) => deploymentLogPut(this.tableName, entry)), ...deletes];
    const first = rest.splice(0, OWN_TRANSACT_ITEMS - head.length);
    if (!(await transactOrFalse(this.client, [...head, ...first]))) return false;
    // From here the tenant is deleted, and the owner's only copy of the receipt is the answer to this request: a
    // failure must not lose it. Key items left over open nothing (the tombstone refuses them) and the purge removes
    // them within the hour; the receipt, kept in the tombstone, names every destroyed version.
    for (let i = 0; i < rest.length; i += OWN_TRANSACT_ITEMS) {
      const chunk = rest.slice(i, i + OWN_TRANSACT_ITEMS);
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: chunk }));
      } catch (error) {
        logger.error("Tenant deletion: key items left for the purge", {
          tenant_id: tenantId,
          items_left: rest.length - i,
          error_name: error instanceof Error ? error.name : "unknown",
        });
        break;
      }
    }
    return true;
  }
}
