import type { TestProject } from "vitest/node";
import { ensureSandboxPackages } from "#lib/sandbox-packages.ts";
import { startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/**
 * One in-memory DynamoDB Local for the whole run; each test file makes its own tenants. The packages tenant
 * code may require are built first when missing or stale (lib/sandbox-packages.ts).
 */
export default async function setup(project: TestProject) {
  await ensureSandboxPackages();
  const dynamo = await startDynamoDbLocal();
  project.provide("dynamodbEndpoint", dynamo.endpoint);
  return async () => {
    await dynamo.stop();
  };
}
