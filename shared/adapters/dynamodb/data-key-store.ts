import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import { CustodyChanged, type DataKeyStore, TenantDeleted } from "#shared/ports/data-key-store.ts";
import { deletionKeys } from "./tenant-deletion-store.ts";

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

  async putIfAbsent(
    tenantId: string,
    keyId: string,
    wrapped: Buffer,
    custody?: string | null,
  ): Promise<Buffer> {
    const put = {
      TableName: this.tableName,
      Item: {
        ...key(tenantId, keyId),
        entity: "data_key",
        wrapped: wrapped.toString("base64"),
        created_at: this.now().toISOString(),
      },
      ConditionExpression: "attribute_not_exists(PK)",
    };
    // Only while the tenant is not deleted, checked in the key's own write: a request that passed the keyring's live
    // check just before the crypto-shred must not store a new key of the tenant after it (nothing would destroy it
    // but the purge, and the receipt does not name it).
    const live = {
      ConditionCheck: {
        TableName: this.tableName,
        Key: deletionKeys.tombstone(tenantId),
        ConditionExpression: "attribute_not_exists(PK)",
      },
    };
    const custodyCheck =
      custody === undefined
        ? []
        : [
            {
              // The custody record (key-custody-store.ts) still names the key this one was wrapped under.
              ConditionCheck: {
                TableName: this.tableName,
                Key: { PK: `TENANT#${tenantId}`, SK: "KEYCUSTODY" },
                ...(custody === null
                  ? { ConditionExpression: "attribute_not_exists(key_arn)" }
                  : {
                      ConditionExpression: "key_arn = :arn",
                      ExpressionAttributeValues: { ":arn": custody },
                    }),
              },
            },
          ];
    try {
      await this.client.send(
        new TransactWriteCommand({ TransactItems: [{ Put: put }, live, ...custodyCheck] }),
      );
      return wrapped;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[1] === "ConditionalCheckFailed") throw new TenantDeleted();
      if (codes?.[2] === "ConditionalCheckFailed") throw new CustodyChanged();
      if (codes?.[0] !== "ConditionalCheckFailed") throw error;
      const existing = await this.get(tenantId, keyId);
      if (!existing) throw error;
      return existing;
    }
  }
}
