import { join } from "node:path";
import { KMSClient } from "@aws-sdk/client-kms";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { SQSClient } from "@aws-sdk/client-sqs";
import { SSMClient } from "@aws-sdk/client-ssm";
import { LambdaSandbox } from "#shared/adapters/aws/lambda-sandbox.ts";
import { SesMailer } from "#shared/adapters/aws/ses-mailer.ts";
import { SqsJobQueue } from "#shared/adapters/aws/sqs-job-queue.ts";
import { SsmRootKeyVerifier } from "#shared/adapters/aws/ssm-root-key.ts";
import { systemClock, TestClock } from "#shared/adapters/clock.ts";
import { DynamoApplicationStore } from "#shared/adapters/dynamodb/application-store.ts";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { DynamoAuditLogStore } from "#shared/adapters/dynamodb/audit-log-store.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { DynamoIdempotencyStore } from "#shared/adapters/dynamodb/idempotency-store.ts";
import { DynamoMemberStore } from "#shared/adapters/dynamodb/member-store.ts";
import { DynamoProxyStore } from "#shared/adapters/dynamodb/proxy-store.ts";
import { DynamoReactorStore } from "#shared/adapters/dynamodb/reactor-store.ts";
import { DynamoRequestBudget } from "#shared/adapters/dynamodb/request-budget.ts";
import { DynamoSessionStore } from "#shared/adapters/dynamodb/session-store.ts";
import { DynamoSweepStore } from "#shared/adapters/dynamodb/sweep-store.ts";
import { DynamoTenantStore } from "#shared/adapters/dynamodb/tenant-store.ts";
import { DynamoTokenStore } from "#shared/adapters/dynamodb/token-store.ts";
import { DynamoTransactionStore } from "#shared/adapters/dynamodb/transaction-store.ts";
import { KmsKeyWrapper } from "#shared/adapters/kms/kms-key-wrapper.ts";
import { LocalJobQueue } from "#shared/adapters/local/local-job-queue.ts";
import { loadOrCreateMasterKey, MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { OutboxMailer } from "#shared/adapters/local/outbox-mailer.ts";
import { StaticRootKeyVerifier } from "#shared/adapters/local/root-key.ts";
import { type Config, config } from "#shared/config.ts";
import { Authenticator } from "#shared/domain/authentication.ts";
import { Keyring } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";
import { CachingProxyStore } from "#shared/domain/proxies/caching-proxy-store.ts";
import { RateLimiter } from "#shared/domain/rate-limit.ts";
import type { JobQueue } from "#shared/domain/reactors/callback-job.ts";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { hashKey } from "#shared/ids.ts";
import { logger } from "#shared/logger.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import type { Mailer } from "#shared/ports/mailer.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import { protectEndpoint } from "#shared/proxy/address-guard.ts";
import { NoSandbox } from "#shared/sandbox/none.ts";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";
import type { Sandbox } from "#shared/sandbox/sandbox.ts";

/** Everything a use case may need, built once per process (Lambda init or local server start). */
export function createDeps(cfg: Config) {
  const testClock = cfg.testClock ? new TestClock() : undefined;
  const clock: Clock = testClock ?? systemClock;
  const client = createDocumentClient({ region: cfg.region, endpoint: cfg.dynamodbEndpoint });
  // A tenant's proxy or callback never reaches the table's endpoint (DynamoDB Local checks no credentials).
  if (cfg.dynamodbEndpoint) protectEndpoint(cfg.dynamodbEndpoint);
  const audit = new AuditItems(cfg.tableName, cfg.logRetentionDays);
  const applications = new DynamoApplicationStore(client, cfg.tableName, audit);
  const rootKey: RootKeyVerifier = cfg.rootKeyParameter
    ? new SsmRootKeyVerifier(new SSMClient({ region: cfg.region }), cfg.rootKeyParameter, clock)
    : new StaticRootKeyVerifier(cfg.rootKeyHash ?? (cfg.rootKey ? hashKey(cfg.rootKey) : undefined));
  // KMS in AWS; locally a master key file under the data dir, created on first use.
  const keyWrapper: KeyWrapper = cfg.kmsKeyId
    ? new KmsKeyWrapper(new KMSClient({ region: cfg.region }), cfg.kmsKeyId)
    : new MasterKeyWrapper(loadOrCreateMasterKey(join(cfg.dataDir, "master.key")));
  const tokens = new DynamoTokenStore(client, cfg.tableName, audit);
  const sessions = new DynamoSessionStore(client, cfg.tableName, audit);
  // SES in AWS; locally .eml files under <data dir>/outbox/.
  const mailer: Mailer =
    cfg.mode === "aws"
      ? new SesMailer(new SESv2Client({ region: cfg.region }), cfg.emailSender)
      : new OutboxMailer(join(cfg.dataDir, "outbox"), cfg.emailSender, clock);
  const keyring = new Keyring(
    keyWrapper,
    new DynamoDataKeyStore(client, cfg.tableName, () => clock.now()),
    clock,
  );
  // Customer code runs in permission-restricted child processes, one per tenant and code version: here
  // locally, in AWS inside the tenant's own runner function.
  // (config.ts refuses AWS mode without the runner settings: never a ProcessSandbox in a Lambda.)
  const sandbox: Sandbox =
    cfg.sandbox === "runner" && cfg.runner
      ? new LambdaSandbox(new LambdaClient({ region: cfg.region }), cfg.runner, cfg.apiUrl, {
          outboundLimits: cfg.sandboxFetch,
        })
      : cfg.sandbox === "process" && cfg.mode === "local"
        ? new ProcessSandbox({
            maxProcesses: cfg.sandboxProcesses,
            maxProcessesPerTenant: cfg.sandboxTenantProcesses,
            // The code's fetch follows the proxies' address rule (SVC_PROXY_ALLOW_PRIVATE included).
            outbound: { allowPrivate: cfg.proxyAllowPrivate, requireHttps: false, limits: cfg.sandboxFetch },
          })
        : new NoSandbox();
  // Asynchronous reactions: SQS in AWS, an in-process queue with the same retry semantics locally.
  const localJobQueue =
    cfg.mode === "local"
      ? new LocalJobQueue({ dataDir: cfg.dataDir, clock, retryBaseSeconds: cfg.callbackRetryBaseSeconds })
      : undefined;
  const jobQueue: JobQueue | undefined =
    localJobQueue ??
    (cfg.callbackQueueUrl
      ? new SqsJobQueue(new SQSClient({ region: cfg.region }), cfg.callbackQueueUrl)
      : undefined);
  return {
    config: cfg,
    sandbox,
    jobQueue,
    localJobQueue,
    /** host:port names this service answers on (set by the local server once listening): proxies never call them. */
    selfHosts: [] as string[],
    sealer: new Sealer(keyring),
    // Fingerprints stringify whole token data, so output may be as large as the largest data (64 KB).
    expressions: createExpressionEngine({ maxOutputChars: 256 * 1024 }),
    tokens,
    transactions: new DynamoTransactionStore(client, cfg.tableName, audit, tokens),
    sweep: new DynamoSweepStore(client, cfg.tableName, audit),
    sessions,
    // Proxy keys are resolved through a short cache, as API keys are (docs/proxies.md, "Changes and caching").
    proxies: new CachingProxyStore(
      new DynamoProxyStore(client, cfg.tableName, audit),
      clock,
      cfg.authCacheSeconds,
    ),
    reactors: new DynamoReactorStore(client, cfg.tableName, audit),
    members: new DynamoMemberStore(client, cfg.tableName, audit, applications),
    mailer,
    clock,
    testClock,
    dynamo: client,
    applications,
    tenants: new DynamoTenantStore(client, cfg.tableName, audit, applications),
    auditLog: new DynamoAuditLogStore(client, cfg.tableName, audit),
    idempotency: new DynamoIdempotencyStore(client, cfg.tableName, clock),
    authenticator: new Authenticator(applications, sessions, rootKey, clock, cfg.authCacheSeconds),
    // Per-tenant request budgets shared by every process through the table (docs/operations.md).
    rateLimiter:
      cfg.rateLimit.ratePerSecond > 0
        ? new RateLimiter(
            new DynamoRequestBudget(client, cfg.tableName, { deleteSpentWindows: cfg.mode === "local" }),
            clock,
            cfg.rateLimit,
            {
              onLeaseError: (error) =>
                logger.warn("Rate-limit lease failed; request let through", {
                  error_name: error instanceof Error ? error.name : "unknown",
                }),
            },
          )
        : undefined,
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
