import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { DynamoSweepStore } from "#shared/adapters/dynamodb/sweep-store.ts";
import { tokenItem } from "#shared/adapters/dynamodb/token-items.ts";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { DynamoTokenStore } from "#shared/adapters/dynamodb/token-store.ts";
import { auditLogStoreContract, dataKeyStoreContract } from "#test/contract/audit-log-store.ts";
import { auditEntry, storedToken, tokenStoreContract } from "#test/contract/token-store.ts";
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

describe("DynamoTokenStore batch writes", () => {
  it("answers too-large for creates past DynamoDB's 4 MB a write, counted in UTF-8 bytes (never a 500)", async () => {
    const tokens = new DynamoTokenStore(await testDynamo(), TEST_TABLE, audit);
    const tenant = `batch-bytes-${Date.now()}`;
    // 30 tokens of 150,000 three-byte characters: 13.5 MB in UTF-8, 4.5 M characters; 30 items fit the count.
    const entries = Array.from({ length: 30 }, () => {
      const token = storedToken(tenant, { sealed_data: "語".repeat(150_000) });
      return { token, deduplicate: false, audit: auditEntry(token) };
    });
    const outcome = await tokens.createAtOnce(entries, {}, new Date());
    expect(outcome).toEqual({ outcome: "too-large" });
  });
});

describe("DynamoTokenStore reads", () => {
  it("answer a token only if its item names the tenant asked for (not on the strength of the key alone)", async () => {
    const client = await testDynamo();
    const tokens = new DynamoTokenStore(client, TEST_TABLE, audit);
    const token = storedToken("tenant-of-the-item");
    // An item under tenant A's key that names tenant B (a store bug, a migration, a future id format).
    const Item = { ...tokenItem(token), ...tokenKeys.token("tenant-asking", token.id) };
    await client.send(new PutCommand({ TableName: TEST_TABLE, Item }));
    expect(await tokens.get("tenant-asking", token.id)).toBeUndefined();
    expect(await tokens.getMany("tenant-asking", [token.id])).toEqual([]);
  });
});
