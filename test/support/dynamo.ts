import { inject } from "vitest";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";

export const TEST_TABLE = "svc-vault";

/** A document client on the run's DynamoDB Local, with the table created. */
export async function testDynamo() {
  const client = createDocumentClient({ region: "us-east-1", endpoint: inject("dynamodbEndpoint") });
  await ensureTable(client, TEST_TABLE);
  return client;
}
