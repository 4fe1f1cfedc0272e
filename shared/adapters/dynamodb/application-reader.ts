import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Application, ApplicationKey } from "#shared/domain/entities.ts";
import type { ApplicationReader, KeyRecord } from "#shared/ports/stores.ts";
import { stripKeys } from "./audit-items.ts";
import { DELETION_STARTED, keys } from "./schema.ts";

/**
 * The lookups of applications and keys every function makes to authenticate (and to check what a proxy or reactor
 * acts as); the writes are DynamoApplicationStore's, composed only where applications change.
 */
export class DynamoApplicationReader implements ApplicationReader {
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
  ) {}

  async get(tenantId: string, applicationId: string): Promise<Application | undefined> {
    const item = await this.item(tenantId, applicationId);
    return item ? stripKeys<Application>(item, [DELETION_STARTED]) : undefined;
  }

  async getActive(tenantId: string, applicationId: string): Promise<Application | undefined> {
    const item = await this.item(tenantId, applicationId);
    return item && item[DELETION_STARTED] === undefined
      ? stripKeys<Application>(item, [DELETION_STARTED])
      : undefined;
  }

  private async item(tenantId: string, applicationId: string) {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.application(tenantId, applicationId) }),
    );
    return out.Item;
  }

  async getKey(tenantId: string, applicationId: string, keyId: string): Promise<ApplicationKey | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.applicationKey(tenantId, applicationId, keyId) }),
    );
    if (!out.Item) return undefined;
    const { id, application_id, created_at, minted_by, minted_through, minted_chain } =
      out.Item as ApplicationKey;
    return {
      id,
      application_id,
      created_at,
      ...(minted_by ? { minted_by } : {}),
      ...(minted_through ? { minted_through } : {}),
      ...(minted_chain?.length ? { minted_chain } : {}),
    };
  }

  async findKey(keyHash: string): Promise<KeyRecord | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const { tenant_id, application_id, key_id, session_id } = out.Item as KeyRecord;
    return { tenant_id, application_id, key_id, ...(session_id ? { session_id } : {}) };
  }

  memberActive(tenantId: string, memberId: string): Promise<boolean> {
    return this.notDeleting(keys.member(tenantId, memberId));
  }

  /** Whether the item exists and no deletion of it has begun (key-revocation.ts, markDeletionStarted). */
  protected async notDeleting(key: Record<string, string>): Promise<boolean> {
    const item = await this.existing(key);
    return item !== undefined && item[DELETION_STARTED] === undefined;
  }

  protected async itemExists(key: Record<string, string>): Promise<boolean> {
    return (await this.existing(key)) !== undefined;
  }

  /** The item's key and deletion mark, read consistently; undefined when there is no such item. */
  private async existing(key: Record<string, string>) {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: key,
        ConsistentRead: true,
        ProjectionExpression: "PK, #fence",
        ExpressionAttributeNames: { "#fence": DELETION_STARTED },
      }),
    );
    return out.Item;
  }
}
