import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { Tenant } from "#shared/domain/entities.ts";
import type { TenantStore } from "#shared/ports/stores.ts";
import type { DynamoApplicationStore } from "./application-store.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { keys } from "./schema.ts";

export class DynamoTenantStore implements TenantStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
    private readonly applications: DynamoApplicationStore,
  ) {}

  async createTenant(input: Parameters<TenantStore["createTenant"]>[0]): Promise<void> {
    const put = (item: Record<string, unknown>) => ({
      Put: { TableName: this.tableName, Item: item, ConditionExpression: "attribute_not_exists(PK)" },
    });
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          put({ ...keys.tenant(input.tenant.id), entity: "tenant", ...input.tenant }),
          // Named after its tenant, as every item of it: the purge's scan finds it (tenant-purge-store.ts).
          put({ ...keys.user(input.owner.id), entity: "user", tenant_id: input.tenant.id, ...input.owner }),
          put({ ...keys.member(input.tenant.id, input.member.id), entity: "tenant_member", ...input.member }),
          this.applications.applicationPut(input.application),
          ...this.applications.keyPuts(input.key),
          ...input.audit.map((entry) => this.audit.put(entry)),
        ],
      }),
    );
  }

  async getTenant(tenantId: string): Promise<Tenant | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.tenant(tenantId) }),
    );
    return out.Item ? stripKeys<Tenant>(out.Item) : undefined;
  }
}
