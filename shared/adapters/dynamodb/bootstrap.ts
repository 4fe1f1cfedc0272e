import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { TABLE_KEYS } from "./schema.ts";

/**
 * Creates the table when absent (local mode and tests; in AWS the CDK stack owns it); whether this call created it
 * (another process starting at once may have).
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return false;
  } catch (error) {
    if (!(error instanceof Error) || error.name !== "ResourceNotFoundException") throw error;
  }
  const k = TABLE_KEYS;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [
          { AttributeName: k.partitionKey, AttributeType: "S" },
          { AttributeName: k.sortKey, AttributeType: "S" },
          { AttributeName: k.gsi1PartitionKey, AttributeType: "S" },
          { AttributeName: k.gsi1SortKey, AttributeType: "S" },
        ],
        KeySchema: [
          { AttributeName: k.partitionKey, KeyType: "HASH" },
          { AttributeName: k.sortKey, KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: k.gsi1Name,
            KeySchema: [
              { AttributeName: k.gsi1PartitionKey, KeyType: "HASH" },
              { AttributeName: k.gsi1SortKey, KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
        ],
      }),
    );
  } catch (error) {
    // Two processes starting at once: the other one created it.
    if (!(error instanceof Error) || error.name !== "ResourceInUseException") throw error;
    return false;
  }
  return true;
}
