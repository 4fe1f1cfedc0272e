import { KMSClient } from "@aws-sdk/client-kms";
import { DynamoApplicationReader } from "#shared/adapters/dynamodb/application-reader.ts";
import { TABLE_CALL_LIMITS } from "#shared/adapters/dynamodb/client.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { DynamoIdempotencyStore } from "#shared/adapters/dynamodb/idempotency-store.ts";
import { DynamoKeyCustodyStore } from "#shared/adapters/dynamodb/key-custody-store.ts";
import { DynamoKeyVersionStore } from "#shared/adapters/dynamodb/key-version-store.ts";
import { DynamoRequestBudget } from "#shared/adapters/dynamodb/request-budget.ts";
import { DynamoStoreProbe } from "#shared/adapters/dynamodb/store-probe.ts";
import { DynamoTenantDeletionStore } from "#shared/adapters/dynamodb/tenant-deletion-store.ts";
import { KmsKeyWrapper } from "#shared/adapters/kms/kms-key-wrapper.ts";
import { MasterKeyWrapper, readMasterKey } from "#shared/adapters/local/master-key-wrapper.ts";
import { StaticRootKeyVerifier } from "#shared/adapters/local/root-key.ts";
import type { Config } from "#shared/config.ts";
import { Authenticator } from "#shared/domain/authentication.ts";
import { AnswerSealer } from "#shared/domain/crypto/answer-sealer.ts";
import { KeyHealth } from "#shared/domain/crypto/key-health.ts";
import { DEFAULT_KEYRING_OPTIONS, Keyring } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";
import { TenantKeyWrapper } from "#shared/domain/crypto/tenant-key-wrapper.ts";
import { DeletedTenants } from "#shared/domain/deleted-tenants.ts";
import { KeyStateCache } from "#shared/domain/keys/key-state.ts";
import {
  browserPolicy,
  ownBucketOfSub,
  RateLimiter,
  type RateLimiterOptions,
  type RateLimitPolicy,
  searchPolicy,
  tenantOfSubBucket,
} from "#shared/domain/rate-limit.ts";
import { StoreHealth } from "#shared/domain/store-health.ts";
import { hashKey } from "#shared/ids.ts";
import { logger } from "#shared/logger.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import type { FlushableMetrics } from "#shared/ports/metrics.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import { traced } from "#shared/tracer.ts";
import { customerKeys } from "./key-custody.ts";
import { sessionStore } from "./stores.ts";
import { composeTable } from "./table.ts";
import type { UsageMeter } from "./usage-meter.ts";

export interface CoreOptions {
  /**
   * Where the root key's hash lives (root routes only: system, tenants). Default: the hash held in memory
   * from SVC_ROOT_KEY / SVC_ROOT_KEY_HASH, so the data-plane functions never load the SSM client.
   */
  rootKey?: (cfg: Config, clock: Clock) => RootKeyVerifier;
  /** `npm run cost` only: counts table capacity and key-wrapper calls (usage-meter.ts). */
  meter?: UsageMeter;
  /** Wraps the master key's wrapper (tests: one that fails as a disabled KMS key would). */
  wrapKeys?: (wrapper: KeyWrapper) => KeyWrapper;
  /** Where metrics go instead of the mode's adapter (tests: the recording adapter). */
  metrics?: FlushableMetrics;
}

const rootKeyInMemory = (cfg: Config): RootKeyVerifier =>
  new StaticRootKeyVerifier(cfg.rootKeyHash ?? (cfg.rootKey ? hashKey(cfg.rootKey) : undefined));

/**
 * KMS in AWS; locally the master key file SVC_MASTER_KEY_FILE, which startLocalService checked against the data
 * (or created for a table holding none) before composing. Nothing here creates a key: a key made up beside data
 * sealed under another one would answer 500 to every read. An AWS function without SVC_KMS_KEY_ID was granted no
 * data key (lib/function-groups.ts): it fails closed when asked to seal, rather than writing a master key file to
 * Lambda's read-only file system at start-up.
 */
export function dataKeyWrapper(cfg: Config): KeyWrapper {
  if (cfg.kmsKeyId) {
    // Bounded as the table's calls are: KMS away is a 503 within the function's timeout, not a hang.
    const kms = new KMSClient({
      region: cfg.region,
      maxAttempts: TABLE_CALL_LIMITS.maxAttempts,
      requestHandler: {
        connectionTimeout: TABLE_CALL_LIMITS.connectionTimeoutMs,
        requestTimeout: TABLE_CALL_LIMITS.requestTimeoutMs,
      },
    });
    return new KmsKeyWrapper(traced(kms), cfg.kmsKeyId);
  }
  if (cfg.mode === "aws") return refusing("This function has no data key (SVC_KMS_KEY_ID is not set)");
  const key = cfg.masterKeyFile ? readMasterKey(cfg.masterKeyFile) : undefined;
  if (!key) return refusing("No checked master key (start the service with startLocalService / npm start)");
  return new MasterKeyWrapper(key);
}

const refusing = (why: string): KeyWrapper => {
  const refuse = async (): Promise<never> => {
    throw new Error(`${why}: it cannot seal or open data.`);
  };
  return { generateDataKey: refuse, unwrap: refuse };
};

/**
 * What every HTTP function needs, built once per process: the clock, the table client, the stores behind
 * authentication, rate limits and idempotency, and the sealer (idempotent answers are stored sealed).
 * Each function group adds only the adapters its routes use (the other builders of shared/composition/).
 */
export function composeCore(cfg: Config, options: CoreOptions = {}) {
  const table = composeTable(cfg, { meter: options.meter, metrics: options.metrics });
  const { clock, dynamo, audit } = table;
  const applications = new DynamoApplicationReader(dynamo, cfg.tableName);
  const { sessions } = sessionStore(table);
  const rootKey = options.rootKey?.(cfg, clock) ?? rootKeyInMemory(cfg);
  const masterKey = dataKeyWrapper(cfg);
  // Tests break the deployment key through wrapKeys (GET /healthz readiness).
  const deploymentKey = options.wrapKeys?.(masterKey) ?? masterKey;
  const custody = new DynamoKeyCustodyStore(dynamo, cfg.tableName);
  const tenantDeletion = new DynamoTenantDeletionStore(dynamo, cfg.tableName, audit);
  // Shared by the auth path and the keyring: a deleted tenant's keys and data keys end together.
  const deletedTenants = new DeletedTenants(tenantDeletion, clock, cfg.authCacheSeconds);
  const tenantKeys = customerKeys(cfg, deploymentKey);
  // Each tenant's data keys under its own KMS key once it brought one, else the deployment's.
  const tenantWrapper = new TenantKeyWrapper(deploymentKey, tenantKeys, (tenantId) =>
    custody.customerKey(tenantId),
  );
  // Key versions (rotation, counters): read through a short cache by every seal (docs/security.md).
  const keyVersions = new DynamoKeyVersionStore(dynamo, cfg.tableName, audit);
  const keyState = new KeyStateCache(keyVersions, clock);
  const keyring = new Keyring(
    options.meter ? options.meter.keyWrapper(tenantWrapper) : tenantWrapper,
    new DynamoDataKeyStore(dynamo, cfg.tableName, () => clock.now()),
    clock,
    DEFAULT_KEYRING_OPTIONS,
    deletedTenants,
    keyState,
  );
  const rateLimiter = (policy: RateLimitPolicy, parent?: RateLimiterOptions["parent"]) =>
    new RateLimiter(
      new DynamoRequestBudget(dynamo, cfg.tableName, { deleteSpentWindows: cfg.mode === "local" }),
      clock,
      policy,
      {
        metrics: table.metrics,
        ...(parent ? { parent } : {}),
        onLeaseError: (error) =>
          logger.warn("Rate-limit lease failed; request let through", {
            error_name: error instanceof Error ? error.name : "unknown",
          }),
      },
    );
  return {
    ...table,
    sealer: new Sealer(keyring),
    // Idempotent answers of the groups that never open token data (shared/http/route.ts GROUP_DATA_KEYS).
    answerSealer: new AnswerSealer(keyring),
    custody,
    customerKeys: tenantKeys,
    tenantDeletion,
    deletedTenants,
    keyring,
    keyVersions,
    keyState,
    applications,
    sessions,
    idempotency: new DynamoIdempotencyStore(dynamo, cfg.tableName, clock),
    // GET /healthz: 503 while the table does not answer (probed with a short timeout, cached about a second).
    storeHealth: new StoreHealth(new DynamoStoreProbe(dynamo, cfg.tableName), clock),
    // GET /healthz: 503 while the deployment key cannot wrap and unwrap a probe data key (cached the same way).
    keyHealth: new KeyHealth(deploymentKey, clock),
    authenticator: new Authenticator(
      applications,
      sessions,
      rootKey,
      clock,
      cfg.authCacheSeconds,
      deletedTenants,
    ),
    // Per-tenant request budgets shared by every process through the table (docs/operations.md).
    rateLimiter: cfg.rateLimit.ratePerSecond > 0 ? rateLimiter(cfg.rateLimit) : undefined,
    // Search has its own budget, a tenth of the request budget (each query is an equality oracle).
    searchRateLimiter: cfg.rateLimit.ratePerSecond > 0 ? rateLimiter(searchPolicy(cfg.rateLimit)) : undefined,
    // Browser-held keys (public applications', sessions) spend at most half of their tenant's budget.
    browserRateLimiter:
      cfg.rateLimit.ratePerSecond > 0
        ? rateLimiter(browserPolicy(cfg.rateLimit), { policy: cfg.rateLimit, bucketOf: tenantOfSubBucket })
        : undefined,
    // ... and at most half of its search budget.
    browserSearchRateLimiter:
      cfg.rateLimit.ratePerSecond > 0
        ? rateLimiter(browserPolicy(searchPolicy(cfg.rateLimit)), {
            policy: searchPolicy(cfg.rateLimit),
            bucketOf: ownBucketOfSub,
          })
        : undefined,
  };
}

export type Core = ReturnType<typeof composeCore>;
