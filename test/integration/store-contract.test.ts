import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { DynamoSweepStore } from "#shared/adapters/dynamodb/sweep-store.ts";
import { DynamoTokenStore } from "#shared/adapters/dynamodb/token-store.ts";
import { auditLogStoreContract, dataKeyStoreContract } from "#test/contract/audit-log-store.ts";
import { tokenStoreContract } from "#test/contract/token-store.ts";
import { TEST_TABLE, testDynamo } from "#test/support/dynamo.ts";

// The DynamoDB half of the store contracts (on the run's DynamoDB Local); the in-memory half is a unit test.
const audit = new AuditItems(TEST_TABLE, 30);
tokenStoreContract("DynamoDB", async () => {
  const client = await testDynamo();
  const auditLog = new DynamoAuditLogStore(client, TEST_TABLE, audit);
  const sweep = new DynamoSweepStore(client, TEST_TABLE, audit);
  const removeCvc = (tenantId: string, tokenId: string, now: Date) =>
    sweep.removeCvc(
      { key: { PK: "", SK: "" }, kind: "C", tenantId, tokenId, tokenType: "card", dueAt: "" },
      now,
    );
  return { tokens: new DynamoTokenStore(client, TEST_TABLE, audit), auditLog, removeCvc };
});
auditLogStoreContract("DynamoDB", async () => new DynamoAuditLogStore(await testDynamo(), TEST_TABLE, audit));
dataKeyStoreContract(
  "DynamoDB",
  async () => new DynamoDataKeyStore(await testDynamo(), TEST_TABLE, () => new Date()),
);
