import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { Application, ApplicationKey } from "#shared/domain/entities.ts";
import { notFound, validationError } from "#shared/domain/errors.ts";
import type { ApplicationStore, KeyRecord, PageRequest, StoredKey, StorePage } from "#shared/ports/stores.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { transactOrFalse } from "./client.ts";
import { countQuery, decodeCursor, encodeCursor, queryUpTo } from "./paging.ts";
import { keys } from "./schema.ts";

/** Keys per application are capped so deleting an application stays one transaction (≤ 100 items). */
export const MAX_KEYS_PER_APPLICATION = 20;

export class DynamoApplicationStore implements ApplicationStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  /** The two items a key needs: the listing under its tenant and the lookup by hash. */
  keyPuts(key: StoredKey) {
    const listing = {
      ...keys.applicationKey(key.tenant_id, key.application_id, key.id),
      entity: "application_key",
      id: key.id,
      application_id: key.application_id,
      created_at: key.created_at,
      key_hash: key.key_hash,
      ...(key.minted_by ? { minted_by: key.minted_by } : {}),
    };
    const lookup = {
      ...keys.apiKey(key.key_hash),
      entity: "api_key",
      tenant_id: key.tenant_id,
      application_id: key.application_id,
      key_id: key.id,
    };
    return [
      { Put: { TableName: this.tableName, Item: listing, ConditionExpression: "attribute_not_exists(PK)" } },
      { Put: { TableName: this.tableName, Item: lookup, ConditionExpression: "attribute_not_exists(PK)" } },
    ];
  }

  applicationPut(application: Application) {
    return {
      Put: {
        TableName: this.tableName,
        Item: {
          ...keys.application(application.tenant_id, application.id),
          entity: "application",
          ...application,
        },
        ConditionExpression: "attribute_not_exists(PK)",
      },
    };
  }

  async create(application: Application, key: StoredKey | undefined, audit: LogEntry): Promise<void> {
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          this.applicationPut(application),
          ...(key ? this.keyPuts(key) : []),
          this.audit.put(audit),
        ],
      }),
    );
  }

  async get(tenantId: string, applicationId: string): Promise<Application | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.application(tenantId, applicationId) }),
    );
    return out.Item ? stripKeys<Application>(out.Item) : undefined;
  }

  async list(tenantId: string, page: PageRequest): Promise<StorePage<Application>> {
    const after = page.start === undefined ? undefined : decodeCursor(page.start);
    if (page.start !== undefined && after === undefined)
      throw validationError("The start cursor is invalid.");
    const input = {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": "APP#" },
    };
    const offset = after ? 0 : (page.page - 1) * page.size;
    const [items, total] = await Promise.all([
      queryUpTo(
        this.client,
        after ? { ...input, ExclusiveStartKey: keys.application(tenantId, after) } : input,
        offset + page.size + 1,
      ),
      countQuery(this.client, input),
    ]);
    const pageItems = items.slice(offset, offset + page.size).map((i) => stripKeys<Application>(i));
    const last = pageItems.at(-1);
    return {
      items: pageItems,
      total,
      ...(items.length > offset + page.size && last ? { next: encodeCursor(last.id) } : {}),
    };
  }

  async update(application: Application, audit: LogEntry): Promise<void> {
    const written = await transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: keys.application(application.tenant_id, application.id),
          ConditionExpression: "attribute_exists(PK)",
          UpdateExpression:
            "SET #name = :name, #permissions = :permissions, #rules = :rules, #origins = :origins, #modified_by = :modified_by, #modified_at = :modified_at",
          ExpressionAttributeNames: {
            "#name": "name",
            "#permissions": "permissions",
            "#rules": "rules",
            "#origins": "allowed_origins",
            "#modified_by": "modified_by",
            "#modified_at": "modified_at",
          },
          ExpressionAttributeValues: {
            ":name": application.name,
            ":permissions": application.permissions,
            ":rules": application.rules,
            ":origins": application.allowed_origins ?? [],
            ":modified_by": application.modified_by ?? null,
            ":modified_at": application.modified_at,
          },
        },
      },
      this.audit.put(audit),
    ]);
    if (!written) throw notFound("The application");
  }

  private async storedKeys(tenantId: string, applicationId: string) {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": `APPKEY#${applicationId}#` },
      }),
    );
    return (out.Items ?? []) as (ApplicationKey & { key_hash: string })[];
  }

  async delete(tenantId: string, applicationId: string, audit: LogEntry): Promise<boolean> {
    const stored = await this.storedKeys(tenantId, applicationId);
    return transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.application(tenantId, applicationId),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      ...stored.flatMap((key) => [
        {
          Delete: {
            TableName: this.tableName,
            Key: keys.applicationKey(tenantId, applicationId, key.id),
          },
        },
        { Delete: { TableName: this.tableName, Key: keys.apiKey(key.key_hash) } },
      ]),
      this.audit.put(audit),
    ]);
  }

  async addKey(key: StoredKey, audit: LogEntry): Promise<void> {
    const existing = await this.storedKeys(key.tenant_id, key.application_id);
    if (existing.length >= MAX_KEYS_PER_APPLICATION)
      throw validationError(
        `An application holds at most ${MAX_KEYS_PER_APPLICATION} keys; delete one first.`,
      );
    const written = await transactOrFalse(this.client, [
      {
        ConditionCheck: {
          TableName: this.tableName,
          Key: keys.application(key.tenant_id, key.application_id),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      ...this.keyPuts(key),
      this.audit.put(audit),
    ]);
    if (!written) throw notFound("The application");
  }

  async listKeys(tenantId: string, applicationId: string): Promise<ApplicationKey[]> {
    const stored = await this.storedKeys(tenantId, applicationId);
    return stored.map(({ id, application_id, created_at }) => ({ id, application_id, created_at }));
  }

  async getKey(tenantId: string, applicationId: string, keyId: string): Promise<ApplicationKey | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.applicationKey(tenantId, applicationId, keyId) }),
    );
    if (!out.Item) return undefined;
    const { id, application_id, created_at } = out.Item as ApplicationKey;
    return { id, application_id, created_at };
  }

  async deleteKey(
    tenantId: string,
    applicationId: string,
    keyId: string,
    audit: LogEntry,
  ): Promise<string | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.applicationKey(tenantId, applicationId, keyId) }),
    );
    const keyHash = out.Item?.key_hash as string | undefined;
    if (!keyHash) return undefined;
    const written = await transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.applicationKey(tenantId, applicationId, keyId),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      { Delete: { TableName: this.tableName, Key: keys.apiKey(keyHash) } },
      this.audit.put(audit),
    ]);
    return written ? keyHash : undefined;
  }

  async findKey(keyHash: string): Promise<KeyRecord | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const { tenant_id, application_id, key_id, session_id } = out.Item as KeyRecord;
    return { tenant_id, application_id, key_id, ...(session_id ? { session_id } : {}) };
  }
}
