import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, inject } from "vitest";
import { type LocalService, type LocalServiceOptions, startLocalService } from "#functions/local.ts";
import type { UsageMeter } from "#shared/composition/usage-meter.ts";

export interface TestService {
  url: string;
  rootKey: string;
  service: LocalService;
}

export interface UseServiceOptions {
  /**
   * Let proxies and callbacks reach loopback destinations (the tests' own receivers on 127.0.0.1): sets
   * SVC_PROXY_ALLOW_PRIVATE=1. Default off, as the service's own default.
   */
  allowPrivateDestinations?: boolean;
  /** What measures expression render time; default the service's own (the process's CPU time). */
  renderMeter?: () => number;
  /** Counts what requests use of the table and the other billed services (as `npm run cost` does). */
  meter?: UsageMeter;
  /** Wraps the service's master key wrapper (a key path that can be made to fail). */
  wrapKeys?: LocalServiceOptions["wrapKeys"];
  /** Where the service's metrics go (the recording adapter), instead of local mode's debug lines. */
  metrics?: LocalServiceOptions["metrics"];
}

/**
 * Starts the service in this test file's process, on a free port, against the run's DynamoDB Local,
 * with the test clock on. Returns a holder filled in by beforeAll.
 */
export function useService(options: UseServiceOptions = {}): TestService {
  const holder = {} as TestService;
  beforeAll(async () => {
    const rootKey = `key_root_test_${randomUUID()}`;
    const service = await startLocalService({
      port: 0,
      rootKey,
      dataDir: join(tmpdir(), `svc-test-${process.pid}`),
      // Beside the data directory, not under the user's configuration directory: tests leave nothing in $HOME.
      masterKeyFile: join(tmpdir(), `svc-test-${process.pid}.master.key`),
      dynamodbEndpoint: inject("dynamodbEndpoint"),
      testClock: true,
      // A table per test file: each file moves its own test clock, and the sweep's progress is per table.
      tableName: `svc-test-${randomUUID()}`,
      proxyAllowPrivate: options.allowPrivateDestinations ?? false,
      ...(options.renderMeter ? { renderMeter: options.renderMeter } : {}),
      ...(options.meter ? { meter: options.meter } : {}),
      ...(options.wrapKeys ? { wrapKeys: options.wrapKeys } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    Object.assign(holder, { url: service.url, rootKey, service });
  });
  afterAll(async () => {
    await holder.service?.stop();
  });
  return holder;
}

/** Moves the service's test clock forward (POST /_test/clock with the root key). */
export async function advanceTestClock(svc: TestService, seconds: number): Promise<void> {
  const res = await fetch(`${svc.url}/_test/clock`, {
    method: "POST",
    headers: { "svc-api-key": svc.rootKey, "content-type": "application/json" },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
  if (res.status !== 200) throw new Error(`the test clock answered ${res.status}`);
}
