/**
 * The token use cases on in-memory stores (shared/adapters/memory), for unit tests of domain rules that need no
 * HTTP and no DynamoDB Local. The fakes keep the DynamoDB stores' contract (test/contract/).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { TestClock } from "#shared/adapters/clock.ts";
import { MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { MemoryAuditLogStore } from "#shared/adapters/memory/audit-log-store.ts";
import { MemoryDataKeyStore } from "#shared/adapters/memory/data-key-store.ts";
import { MemoryTokenStore } from "#shared/adapters/memory/token-store.ts";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import type { AccessRule } from "#shared/domain/access-rules.ts";
import { Keyring } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import {
  type ApplicationType,
  type Permission,
  TOKEN_PERMISSIONS,
  type TokenPermission,
} from "#shared/domain/permissions.ts";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";

/** One tenant's token domain in memory, with a clock the test moves. */
export function fakeTokenDomain() {
  const clock = new TestClock();
  const auditLog = new MemoryAuditLogStore();
  const tokens = new MemoryTokenStore(auditLog);
  const keyring = new Keyring(new MasterKeyWrapper(randomBytes(32)), new MemoryDataKeyStore(), clock);
  const deps: TokenDeps = {
    tokens,
    auditLog,
    sealer: new Sealer(keyring),
    // As the service's (composition/token-domain.ts): fingerprints stringify whole token data.
    expressions: createExpressionEngine({ maxOutputChars: 256 * 1024 }),
    clock,
    // What the use cases counted (tokens created, read, detokenized), for a test that asks.
    metrics: new RecordingMetrics(),
    // No transactions here: no token is ever held, so a write never asks about a holder.
    transactions: {
      get: async () => undefined,
      rollback: async () => false,
      finishCommit: async () => ({ created: 0 }),
    },
    authenticator: { keyHolder: async () => undefined },
  };
  const tenantId = `tenant-${randomUUID()}`;
  /** A key's principal: an application of the tenant with these permissions or rules. */
  const app = (grant: { type?: ApplicationType; permissions?: Permission[]; rules?: AccessRule[] }) =>
    ({
      kind: "application",
      tenantId,
      keyId: randomUUID(),
      application: {
        id: randomUUID(),
        tenant_id: tenantId,
        name: "test app",
        type: grant.type ?? "private",
        permissions: grant.permissions ?? [],
        rules: grant.rules ?? [],
        created_at: clock.now().toISOString(),
      },
    }) satisfies TenantPrincipal;
  return { deps, clock, tokens, auditLog, tenantId, app };
}

export const ALL_TOKEN_PERMISSIONS: TokenPermission[] = [...TOKEN_PERMISSIONS];

export const REVEAL_EVERYTHING: AccessRule[] = [
  {
    description: "all",
    priority: 1,
    container: "/",
    transform: "reveal",
    permissions: ALL_TOKEN_PERMISSIONS,
  },
];

/** The usual cast of a token test: a public key that creates, a private one that reads masked, a revealer. */
export function tokenTenant() {
  const domain = fakeTokenDomain();
  return {
    ...domain,
    pub: domain.app({ type: "public", permissions: ["token:create", "token:update"] }),
    reader: domain.app({ permissions: ALL_TOKEN_PERMISSIONS }),
    revealer: domain.app({ rules: REVEAL_EVERYTHING }),
  };
}
