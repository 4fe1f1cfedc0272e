import { MemoryAuditLogStore } from "#shared/adapters/memory/audit-log-store.ts";
import { MemoryDataKeyStore } from "#shared/adapters/memory/data-key-store.ts";
import { MemoryTokenStore } from "#shared/adapters/memory/token-store.ts";
import { auditLogStoreContract, dataKeyStoreContract } from "#test/contract/audit-log-store.ts";
import { tokenStoreContract } from "#test/contract/token-store.ts";

// The in-memory half of the store contracts; test/integration/store-contract.test.ts runs DynamoDB's.
tokenStoreContract("in memory", async () => {
  const auditLog = new MemoryAuditLogStore();
  const tokens = new MemoryTokenStore(auditLog);
  return { tokens, auditLog, removeCvc: (tenant, id, now) => tokens.removeCvc(tenant, id, now) };
});
auditLogStoreContract("in memory", async () => new MemoryAuditLogStore());
dataKeyStoreContract("in memory", async () => new MemoryDataKeyStore());
