import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { callbackDepsFor } from "#functions/reactor-callbacks/handler.ts";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { routeList } from "#shared/api/index.ts";
import { config, resetConfig } from "#shared/config.ts";
import { createDeps, type Deps, setDeps } from "#shared/container.ts";
import { processCallbackJob } from "#shared/domain/reactors/callbacks.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { logger } from "#shared/logger.ts";
import { protectEndpoint } from "#shared/proxy/address-guard.ts";
import { type DynamoDbLocal, startDynamoDbLocal } from "./dynamodb-local.ts";
import { createGateway } from "./gateway.ts";
import { groupHandlers } from "./handlers.ts";

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
}

export interface LocalService {
  url: string;
  deps: Deps;
  stop(): Promise<void>;
}

/**
 * Local hosting of the service: DynamoDB Local (unless an endpoint is given), the table, and the gateway
 * in front of the very handlers the Lambdas run.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const dynamo = options.dynamodbEndpoint
    ? undefined
    : await startDynamoDbLocal(options.inMemory ? {} : { dbPath: `${options.dataDir}/dynamodb` });
  const endpoint = options.dynamodbEndpoint ?? (dynamo as DynamoDbLocal).endpoint;

  Object.assign(process.env, {
    SVC_MODE: "local",
    SVC_DYNAMODB_ENDPOINT: endpoint,
    SVC_DATA_DIR: options.dataDir,
    SVC_ROOT_KEY: options.rootKey,
    SVC_TEST_CLOCK: options.testClock ? "1" : "0",
    ...(options.tableName ? { SVC_TABLE_NAME: options.tableName } : {}),
    ...(options.proxyAllowPrivate === undefined
      ? {}
      : { SVC_PROXY_ALLOW_PRIVATE: options.proxyAllowPrivate ? "1" : "0" }),
  });
  resetConfig();
  const deps = createDeps(config());
  setDeps(deps);
  await ensureTable(deps.dynamo, config().tableName);

  // The AWS stack runs the sweep every 15 minutes; locally a timer does, on the same (possibly test) clock.
  const sweepTimer = setInterval(() => {
    sweepExpired(deps).catch((error: unknown) =>
      logger.error("sweep failed", { error_name: error instanceof Error ? error.name : "unknown" }),
    );
  }, LOCAL_SWEEP_INTERVAL_MS);
  sweepTimer.unref();

  // The sandbox's blank spare process, so the first transform of new code does not wait for Node to boot.
  await deps.sandbox.warm?.();

  const server: Server = createGateway(routeList, groupHandlers);
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
  deps.localJobQueue?.start((job, attempt) => processCallbackJob(callbackDepsFor(deps), job, attempt));
  deps.selfHosts.push(`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`);
  // Whatever name or address of this machine a destination uses, the API's port is refused at connect time.
  const unprotect = protectEndpoint(`http://127.0.0.1:${port}`);
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    deps,
    stop: async () => {
      unprotect();
      clearInterval(sweepTimer);
      await deps.localJobQueue?.stop();
      await deps.sandbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      deps.dynamo.destroy();
      await dynamo?.stop();
    },
  };
}
