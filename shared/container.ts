import { SSMClient } from "@aws-sdk/client-ssm";
import { SsmRootKeyVerifier } from "#shared/adapters/aws/ssm-root-key.ts";
import { systemClock, TestClock } from "#shared/adapters/clock.ts";
import { DynamoApplicationStore } from "#shared/adapters/dynamodb/application-store.ts";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";
import { DynamoIdempotencyStore } from "#shared/adapters/dynamodb/idempotency-store.ts";
import { DynamoTenantStore } from "#shared/adapters/dynamodb/tenant-store.ts";
import { StaticRootKeyVerifier } from "#shared/adapters/local/root-key.ts";
import { type Config, config } from "#shared/config.ts";
import { Authenticator } from "#shared/domain/authentication.ts";
import { hashKey } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";

/** Everything a use case may need, built once per process (Lambda init or local server start). */
export function createDeps(cfg: Config) {
  const testClock = cfg.testClock ? new TestClock() : undefined;
  const clock: Clock = testClock ?? systemClock;
  const client = createDocumentClient({ region: cfg.region, endpoint: cfg.dynamodbEndpoint });
  const audit = new AuditItems(cfg.tableName, cfg.logRetentionDays);
  const applications = new DynamoApplicationStore(client, cfg.tableName, audit);
  const rootKey: RootKeyVerifier = cfg.rootKeyParameter
    ? new SsmRootKeyVerifier(new SSMClient({ region: cfg.region }), cfg.rootKeyParameter, clock)
    : new StaticRootKeyVerifier(cfg.rootKeyHash ?? (cfg.rootKey ? hashKey(cfg.rootKey) : undefined));
  return {
    config: cfg,
    clock,
    testClock,
    dynamo: client,
    applications,
    tenants: new DynamoTenantStore(client, cfg.tableName, audit, applications),
    auditLog: new DynamoAuditLogStore(client, cfg.tableName, audit),
    idempotency: new DynamoIdempotencyStore(client, cfg.tableName, clock),
    authenticator: new Authenticator(applications, rootKey, clock, cfg.authCacheSeconds),
  };
}

export type Deps = ReturnType<typeof createDeps>;

let current: Deps | undefined;

/** The process's dependencies, created on first use from the process configuration. */
export function deps(): Deps {
  current ??= createDeps(config());
  return current;
}

/** Replace the process's dependencies (the local server after it has set its environment). */
export function setDeps(next: Deps | undefined): void {
  current = next;
}
