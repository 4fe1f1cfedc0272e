import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/** One in-memory DynamoDB Local for the whole run; each test file makes its own tenants. */
export default async function setup(project: TestProject) {
  const dynamo = await startDynamoDbLocal();
  project.provide("dynamodbEndpoint", dynamo.endpoint);
  return async () => {
    await dynamo.stop();
  };
}
