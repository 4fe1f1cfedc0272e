import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, PutCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import type { KeyCustodyStore } from "#shared/ports/customer-keys.ts";
import { CustodyChanged } from "#shared/ports/data-key-store.ts";
import { queryAll } from "./paging.ts";

/** TENANT#<tid> / KEYCUSTODY: the tenant's own KMS key, once it brought one. Its data keys: data-key-store.ts. */
const custodyKey = (tenantId: string) => ({ PK: `TENANT#${tenantId}`, SK: "KEYCUSTODY" });
const DATA_KEY_PREFIX = "DATAKEY#";

export class DynamoKeyCustodyStore implements KeyCustodyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async customerKey(tenantId: string): Promise<string | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: custodyKey(tenantId), ConsistentRead: true }),
    );
    return out.Item?.key_arn === undefined ? undefined : String(out.Item.key_arn);
  }

  async setCustomerKey(tenantId: string, keyArn: string, at: string): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...custodyKey(tenantId),
          entity: "key_custody",
          tenant_id: tenantId,
          key_arn: keyArn,
          set_at: at,
        },
      }),
    );
  }

  async wrappedKeys(tenantId: string): Promise<{ keyId: string; wrapped: Buffer }[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": DATA_KEY_PREFIX },
      ConsistentRead: true,
    });
    return items.map((item) => ({
      keyId: String(item.SK).slice(DATA_KEY_PREFIX.length),
      wrapped: Buffer.from(String(item.wrapped), "base64"),
    }));
  }

  async replaceWrapped(
    tenantId: string,
    keyId: string,
    previous: Buffer,
    next: Buffer,
    keyArn: string,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: { PK: `TENANT#${tenantId}`, SK: `${DATA_KEY_PREFIX}${keyId}` },
                UpdateExpression: "SET #wrapped = :next",
                ConditionExpression: "#wrapped = :previous",
                ExpressionAttributeNames: { "#wrapped": "wrapped" },
                ExpressionAttributeValues: {
                  ":next": next.toString("base64"),
                  ":previous": previous.toString("base64"),
                },
              },
            },
            {
              ConditionCheck: {
                TableName: this.tableName,
                Key: custodyKey(tenantId),
                ConditionExpression: "key_arn = :arn",
                ExpressionAttributeValues: { ":arn": keyArn },
              },
            },
          ],
        }),
      );
      return true;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[1] === "ConditionalCheckFailed") throw new CustodyChanged();
      if (codes?.[0] === "ConditionalCheckFailed") return false;
      throw error;
    }
  }
}
