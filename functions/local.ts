import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";
import { LocalJobQueue } from "#shared/adapters/local/local-job-queue.ts";
import { openMasterKey } from "#shared/adapters/local/master-key-check.ts";
import { locateMasterKeyFile } from "#shared/adapters/local/master-key-file.ts";
import { routeList, routeTable } from "#shared/api/index.ts";
import { callbackDeps } from "#shared/composition/callbacks.ts";
import { type CoreOptions, composeCore } from "#shared/composition/core.ts";
import { egress } from "#shared/composition/egress.ts";
import { receiptSigner } from "#shared/composition/key-custody.ts";
import { keyCustody } from "#shared/composition/keys.ts";
import { mailer } from "#shared/composition/mailer.ts";
import { rootKeyVerifier } from "#shared/composition/root-key.ts";
import { awsSandbox, sandbox } from "#shared/composition/sandbox.ts";
import {
  memberStore,
  proxyStore,
  reactorStore,
  sweepStore,
  tenantStore,
} from "#shared/composition/stores.ts";
import { type TokenDomainOptions, tokenDomain } from "#shared/composition/token-domain.ts";
import type { UsageMeter } from "#shared/composition/usage-meter.ts";
import { type Config, config, resetConfig } from "#shared/config.ts";
import { processRewrapPage } from "#shared/domain/keys/rewrap.ts";
import { processCallbackJob } from "#shared/domain/reactors/callbacks.ts";
import type { RenderMeter } from "#shared/domain/tokens/render-budget.ts";
import { startSweepsAt, sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { protectEndpoint } from "#shared/egress/address-guard.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import type { FunctionGroup } from "#shared/http/route.ts";
import { drainable } from "#shared/local/drain.ts";
import { type DynamoDbLocal, startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";
import { createGateway, type HttpLambda } from "#shared/local/gateway.ts";
import { logger } from "#shared/logger.ts";
import { gatherPerTurn } from "#shared/observability/log-lines.ts";
import type { RewrapPageMessage } from "#shared/ports/key-versions.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";
import * as applications from "./applications/handler.ts";
import * as logs from "./logs/handler.ts";
import * as members from "./members/handler.ts";
import * as proxies from "./proxies/handler.ts";
import * as proxy from "./proxy/handler.ts";
import * as reactors from "./reactors/handler.ts";
import * as sessions from "./sessions/handler.ts";
import * as system from "./system/handler.ts";
import * as tenants from "./tenants/handler.ts";
import * as tokens from "./tokens/handler.ts";
import * as transactions from "./transactions/handler.ts";

/**
 * Local hosting's composition: one process serves every group, so it composes the union of what the groups
 * compose (the same builders), with the local adapters: the in-process job queue, the outbox mailer, the
 * process sandbox. One set for all groups, so the test clock POST /_test/clock advances is every route's.
 */
export function composeLocal(
  cfg: Config,
  options: TokenDomainOptions & Pick<CoreOptions, "wrapKeys" | "metrics"> = {},
  meter?: UsageMeter,
) {
  const { wrapKeys, metrics } = options;
  const core = composeCore(cfg, {
    rootKey: rootKeyVerifier,
    ...(meter ? { meter } : {}),
    ...(wrapKeys ? { wrapKeys } : {}),
    ...(metrics ? { metrics } : {}),
  });
  // Asynchronous reactions: an in-process queue with the same retry semantics as SQS.
  const localJobQueue = new LocalJobQueue({
    dataDir: cfg.dataDir,
    clock: core.clock,
    retryBaseSeconds: cfg.callbackRetryBaseSeconds,
  });
  // Key rewrap pages: a queue of their own (as in AWS), retried after a second rather than a callback's minute.
  const rewrapQueue = new LocalJobQueue<RewrapPageMessage>({
    dataDir: cfg.dataDir,
    clock: core.clock,
    retryBaseSeconds: Math.min(1, cfg.callbackRetryBaseSeconds),
    jobName: "rewrap page",
    letterOf: (page) => ({
      request_id: `rewrap-${page.jobId}-${page.page}`,
      reactor_id: "",
      tenant_id: page.tenantId,
    }),
  });
  return {
    ...core,
    ...tokenDomain(core, options),
    ...keyCustody(core),
    rewrapQueue,
    ...sweepStore(core),
    ...tenantStore(core),
    ...memberStore(core),
    ...proxyStore(core),
    ...reactorStore(core),
    ...mailer(core),
    ...egress(),
    // Customer code runs in permission-restricted child processes, one per tenant and code version (or, with
    // the runner settings, in runner functions as in AWS; or nowhere with SVC_SANDBOX=none).
    // Runs are measured as metrics (shared/composition/sandbox.ts) and, for npm run cost, metered.
    ...sandbox(
      core,
      meteredSandbox(
        meter,
        cfg.sandbox === "process"
          ? new ProcessSandbox({
              maxProcesses: cfg.sandboxProcesses,
              maxProcessesPerTenant: cfg.sandboxTenantProcesses,
              // The code's fetch follows the proxies' address rule (SVC_PROXY_ALLOW_PRIVATE included).
              outbound: {
                allowPrivate: cfg.proxyAllowPrivate,
                requireHttps: false,
                limits: cfg.sandboxFetch,
              },
            })
          : awsSandbox(cfg),
      ),
    ),
    jobQueue: meter ? meter.jobQueue(localJobQueue) : localJobQueue,
    localJobQueue,
    receiptSigner: receiptSigner(cfg),
  };
}
export type LocalDeps = ReturnType<typeof composeLocal>;

const meteredSandbox = (meter: UsageMeter | undefined, inner: Sandbox): Sandbox =>
  meter ? meter.sandbox(inner) : inner;

/** Every group's routes over the one local composition: the handlers the Lambdas export, composed locally. */
export function localHandlers(deps: LocalDeps): Record<FunctionGroup, HttpLambda> {
  const composed = () => deps;
  return {
    system: createHttpHandler(routeTable, "system", system.routes, composed),
    tenants: createHttpHandler(routeTable, "tenants", tenants.routes, composed),
    applications: createHttpHandler(
      routeTable,
      "applications",
      applications.routes,
      composed,
      applications.replays,
    ),
    logs: createHttpHandler(routeTable, "logs", logs.routes, composed),
    tokens: createHttpHandler(routeTable, "tokens", tokens.routes, composed, tokens.replays),
    transactions: createHttpHandler(routeTable, "transactions", transactions.routes, composed),
    sessions: createHttpHandler(routeTable, "sessions", sessions.routes, composed),
    members: createHttpHandler(routeTable, "members", members.routes, composed, members.replays),
    proxies: createHttpHandler(routeTable, "proxies", proxies.routes, composed, proxies.replays),
    proxy: createHttpHandler(routeTable, "proxy", proxy.routes, composed),
    reactors: createHttpHandler(routeTable, "reactors", reactors.routes, composed, reactors.replays),
  };
}

/** How often the local sweep runs (real time; it reads the service clock, so it follows the test clock). */
export const LOCAL_SWEEP_INTERVAL_MS = 60_000;

export interface LocalServiceOptions {
  port: number;
  host?: string;
  rootKey: string;
  dataDir: string;
  /** Use this DynamoDB instead of starting DynamoDB Local. */
  dynamodbEndpoint?: string;
  /** Start DynamoDB Local in memory rather than under the data dir (tests). */
  inMemory?: boolean;
  testClock?: boolean;
  tableName?: string;
  /**
   * SVC_PROXY_ALLOW_PRIVATE for this service: proxies and callbacks may reach loopback/private addresses
   * (never this API's or DynamoDB's ports, nor link-local/metadata ones). Absent: the environment decides
   * (off unless set).
   */
  proxyAllowPrivate?: boolean;
  /** What measures expression render time (default: CPU time; tests: a meter that counts work). */
  renderMeter?: RenderMeter;
  /** Wraps the master key's wrapper (tests: one that fails as a disabled KMS key would). */
  wrapKeys?: CoreOptions["wrapKeys"];
  /** Where metrics go instead of local mode's debug lines (tests: the recording adapter). */
  metrics?: CoreOptions["metrics"];
  /**
   * The local master key file. Absent: SVC_MASTER_KEY_FILE, else a file under the user's configuration
   * directory named after the data directory (master-key-file.ts), never inside the data directory.
   */
  masterKeyFile?: string;
  /** `npm run cost` only: counts what requests use of the table, the key wrapper, the job queue and the sandbox. */
  meter?: UsageMeter;
  /** Where the DynamoDB Local supervisor's lines go (a restart, giving up). Default: the logger, as warnings. */
  log?: (line: string) => void;
}

export interface LocalService {
  url: string;
  deps: LocalDeps;
  /** The master key file in use (checked against the data before the service answered anything). */
  masterKeyFile: string;
  /** Lines for the operator from the start-up (a master key moved out of the data directory, …). */
  notices: string[];
  /** DynamoDB Local as started here (undefined with an external endpoint). */
  dynamoDbLocal: DynamoDbLocal | undefined;
  /**
   * Drains, then stops: no new connections, requests in flight finish for up to `graceSeconds` (default
   * SVC_SHUTDOWN_GRACE_SECONDS), and only then the job queue, the sandbox and DynamoDB Local stop. Answers how
   * many requests were cut at the end of the grace period.
   */
  stop(options?: { graceSeconds?: number }): Promise<{ cut: number }>;
}

/**
 * Local hosting of the service: DynamoDB Local (unless an endpoint is given), the table, and the gateway
 * in front of the very handlers the Lambdas run.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const log = options.log ?? ((line: string) => logger.warn(line));
  const dynamo = options.dynamodbEndpoint
    ? undefined
    : await startDynamoDbLocal(
        options.inMemory
          ? {}
          : // Persistent data outlives a crash of Java: restart it (bounded) rather than answer 503 for good.
            { dbPath: `${options.dataDir}/dynamodb`, supervise: { maxRestarts: 5, log } },
      );
  const endpoint = options.dynamodbEndpoint ?? (dynamo as DynamoDbLocal).endpoint;

  const notices: string[] = [];
  let masterKeyFile: string;
  let tableCreated = false;
  try {
    const location = locateMasterKeyFile(
      options.dataDir,
      options.masterKeyFile ?? (process.env.SVC_MASTER_KEY_FILE || undefined),
    );
    masterKeyFile = location.file;
    if (location.notice) notices.push(location.notice);
    const tableName = options.tableName ?? process.env.SVC_TABLE_NAME ?? "svc-vault";
    // The key is checked against the data before anything is composed or served: a wrong or missing key
    // refuses to start here, naming the file, rather than answering 500 to every read later.
    const bootstrap = createDocumentClient({ region: process.env.AWS_REGION ?? "us-east-1", endpoint });
    try {
      tableCreated = await ensureTable(bootstrap, tableName);
      await openMasterKey({ file: masterKeyFile, dynamo: bootstrap, tableName });
    } finally {
      bootstrap.destroy();
    }
  } catch (error) {
    await dynamo?.stop();
    throw error;
  }

  Object.assign(process.env, {
    SVC_MODE: "local",
    SVC_DYNAMODB_ENDPOINT: endpoint,
    SVC_DATA_DIR: options.dataDir,
    SVC_ROOT_KEY: options.rootKey,
    SVC_MASTER_KEY_FILE: masterKeyFile,
    SVC_TEST_CLOCK: options.testClock ? "1" : "0",
    ...(options.tableName ? { SVC_TABLE_NAME: options.tableName } : {}),
    ...(options.proxyAllowPrivate === undefined
      ? {}
      : { SVC_PROXY_ALLOW_PRIVATE: options.proxyAllowPrivate ? "1" : "0" }),
  });
  resetConfig();
  const deps = composeLocal(
    config(),
    {
      ...(options.renderMeter ? { renderMeter: options.renderMeter } : {}),
      ...(options.wrapKeys ? { wrapKeys: options.wrapKeys } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    },
    options.meter,
  );

  if (tableCreated) await startSweepsAt(deps, deps.clock.now());
  // The AWS stack runs the sweep every 15 minutes; locally a timer does, on the same (possibly test) clock.
  // One run at a time: a run longer than the interval is not joined by another doing the same work.
  let sweeping = false;
  const sweepTimer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepExpired(deps)
      .catch((error: unknown) =>
        logger.error("sweep failed", { error_name: error instanceof Error ? error.name : "unknown" }),
      )
      .finally(() => {
        sweeping = false;
      });
  }, LOCAL_SWEEP_INTERVAL_MS);
  sweepTimer.unref();

  // The sandbox's blank spare process, so the first transform of new code does not wait for Node to boot.
  await deps.sandbox.warm?.();

  const server: Server = createGateway(routeList, localHandlers(deps));
  const drainer = drainable(server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
    });
  } catch (error) {
    clearInterval(sweepTimer);
    await deps.sandbox.close();
    deps.dynamo.destroy();
    await dynamo?.stop();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  // Queued reactions (react with callback_url) are run and delivered in this process.
  deps.localJobQueue.start((job, attempt) => processCallbackJob(callbackDeps(deps), job, attempt));
  deps.rewrapQueue.start((page) => processRewrapPage(deps, page));
  deps.selfHosts.push(`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`);
  // Whatever name or address of this machine a destination uses, the API's port is refused at connect time.
  const unprotect = protectEndpoint(`http://127.0.0.1:${port}`);
  // Many requests at once in one process: stdout (access lines, log lines) is written once per turn
  // (observability/log-lines.ts).
  const ungather = gatherPerTurn();
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    deps,
    masterKeyFile,
    notices,
    dynamoDbLocal: dynamo,
    stop: async (stopOptions = {}) => {
      // First the requests in flight (they may use the queue, the sandbox and the store), then the rest.
      const cut = await drainer.drain((stopOptions.graceSeconds ?? config().shutdownGraceSeconds) * 1000);
      unprotect();
      clearInterval(sweepTimer);
      await deps.localJobQueue.stop();
      await deps.rewrapQueue.stop();
      await deps.sandbox.close();
      deps.dynamo.destroy();
      await dynamo?.stop();
      ungather();
      return { cut };
    },
  };
}
