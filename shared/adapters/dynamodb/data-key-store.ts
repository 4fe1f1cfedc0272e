import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DataKeyStore } from "#shared/ports/data-key-store.ts";
import { isConditionalCheckFailed } from "./client.ts";

const key = (tenantId: string, keyId: string) => ({ PK: `TENANT#${tenantId}`, SK: `DATAKEY#${keyId}` });

/** Wrapped data keys under the tenant's partition; only ever written once per key id. */
export class DynamoDataKeyStore implements DataKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date,
  ) {}

  async get(tenantId: string, keyId: string): Promise<Buffer | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: key(tenantId, keyId), ConsistentRead: true }),
    );
    return out.Item ? Buffer.from(String(out.Item.wrapped), "base64") : undefined;
  }

  async putIfAbsent(tenantId: string, keyId: string, wrapped: Buffer): Promise<Buffer> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...key(tenantId, keyId),
            entity: "data_key",
            wrapped: wrapped.toString("base64"),
            created_at: this.now().toISOString(),
          },
          ConditionExpression: "attribute_not_exists(PK)",
        }),
      );
      return wrapped;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const existing = await this.get(tenantId, keyId);
      if (!existing) throw error;
      return existing;
    }
  }
}
