import { DynamoApplicationStore } from "#shared/adapters/dynamodb/application-store.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { DynamoMemberStore } from "#shared/adapters/dynamodb/member-store.ts";
import { DynamoProxyStore } from "#shared/adapters/dynamodb/proxy-store.ts";
import { DynamoReactorStore } from "#shared/adapters/dynamodb/reactor-store.ts";
import { DynamoSessionStore } from "#shared/adapters/dynamodb/session-store.ts";
import { DynamoSweepStore } from "#shared/adapters/dynamodb/sweep-store.ts";
import { DynamoTenantPurgeStore } from "#shared/adapters/dynamodb/tenant-purge-store.ts";
import { DynamoTenantStore } from "#shared/adapters/dynamodb/tenant-store.ts";
import { DynamoTokenStore } from "#shared/adapters/dynamodb/token-store.ts";
import { DynamoTransactionStore } from "#shared/adapters/dynamodb/transaction-store.ts";
import { CachingProxyStore } from "#shared/domain/proxies/caching-proxy-store.ts";
import type { Table } from "./table.ts";

/**
 * The table's stores, one builder each, so a function bundles only the stores its routes use. Each takes
 * the core (table client, table name, audit items) and returns fields to spread into the group's deps.
 */

export const auditLogStore = ({ dynamo, config, audit }: Table) => ({
  auditLog: new DynamoAuditLogStore(dynamo, config.tableName, audit),
});

export function tokenStores({ dynamo, config, audit }: Table) {
  const tokens = new DynamoTokenStore(dynamo, config.tableName, audit);
  return { tokens, transactions: new DynamoTransactionStore(dynamo, config.tableName, audit, tokens) };
}

export const sessionStore = ({ dynamo, config, audit }: Table) => ({
  sessions: new DynamoSessionStore(dynamo, config.tableName, audit),
});

/** The sweep's work: what falls due, and deleted tenants' items to purge. */
export const sweepStore = ({ dynamo, config, audit }: Table) => ({
  sweep: new DynamoSweepStore(dynamo, config.tableName, audit),
  tenantPurge: new DynamoTenantPurgeStore(dynamo, config.tableName),
});

/** Applications and their keys, written: only the groups that change them compose it (and the stores below). */
export const applicationStore = ({ dynamo, config, audit }: Table) => ({
  applications: new DynamoApplicationStore(dynamo, config.tableName, audit),
});

/** Tenant writes extend the application store's in one transaction. */
export const tenantStore = (t: Table) => {
  const { applications } = applicationStore(t);
  return {
    applications,
    tenants: new DynamoTenantStore(t.dynamo, t.config.tableName, t.audit, applications),
  };
};

export const memberStore = (t: Table) => {
  const { applications } = applicationStore(t);
  return {
    applications,
    members: new DynamoMemberStore(t.dynamo, t.config.tableName, t.audit, applications),
  };
};

/** Proxy keys are resolved through a short cache, as API keys are (docs/proxies.md, "Changes and caching"). */
export const proxyStore = ({ dynamo, config, audit, clock }: Table) => ({
  proxies: new CachingProxyStore(
    new DynamoProxyStore(dynamo, config.tableName, audit),
    clock,
    config.authCacheSeconds,
  ),
});

export const reactorStore = ({ dynamo, config, audit }: Table) => ({
  reactors: new DynamoReactorStore(dynamo, config.tableName, audit),
});
