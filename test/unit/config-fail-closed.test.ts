/**
 * Attack: a deployment that lost its runner settings (a hand-edited function, a partial stack update) would
 * run tenants' transform and reactor code in the API function itself, with its KMS, DynamoDB and SSM grants.
 * AWS mode refuses to start instead.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "#shared/adapters/clock.ts";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import { composeCore, dataKeyWrapper } from "#shared/composition/core.ts";
import { sandbox } from "#shared/composition/sandbox.ts";
import { loadConfig } from "#shared/config.ts";
import { NoSandbox } from "#shared/sandbox/none.ts";

const runner = {
  SVC_RUNNER_PREFIX: "SvcVault-ab12cd-",
  SVC_RUNNER_ROLE_ARN: "arn:aws:iam::123456789012:role/runner",
  SVC_RUNNER_CODE_BUCKET: "cdk-assets",
  SVC_RUNNER_CODE_KEY: "abc.zip",
  SVC_RUNNER_RUNTIME: "nodejs24.x",
  SVC_RUNNER_HANDLER: "index.handler",
  SVC_RUNNER_MEMORY_MB: "1024",
  SVC_RUNNER_TIMEOUT_SECONDS: "240",
  SVC_RUNNER_ARCHITECTURE: "arm64",
  SVC_RUNNER_LOG_GROUP: "runners",
  SVC_STACK_NAME: "SvcVault",
};
const aws = { SVC_MODE: "aws", SVC_TABLE_NAME: "svc", SVC_KMS_KEY_ID: "alias/svc" };

describe("AWS mode fails closed without the runner settings", () => {
  it("refuses to start without SVC_RUNNER_* (detected by SVC_MODE or by AWS_LAMBDA_FUNCTION_NAME)", () => {
    expect(() => loadConfig(aws)).toThrow(
      /Invalid configuration: .*SVC_RUNNER_PREFIX.* are required in AWS mode/,
    );
    expect(() => loadConfig({ AWS_LAMBDA_FUNCTION_NAME: "f", SVC_TABLE_NAME: "svc" })).toThrow(
      /required in AWS mode/,
    );
    expect(() => loadConfig({ ...aws, SVC_SANDBOX: "runner" })).toThrow(/required in AWS mode/);
  });

  it("refuses the in-process sandbox in AWS mode, runner settings or not", () => {
    expect(() => loadConfig({ ...aws, SVC_SANDBOX: "process" })).toThrow(/SVC_SANDBOX=process is refused/);
    expect(() => loadConfig({ ...aws, ...runner, SVC_SANDBOX: "process" })).toThrow(/refused in AWS mode/);
  });

  it("starts with the runner settings, and a function that declares it runs no tenant code refuses every run", async () => {
    expect(loadConfig({ ...aws, ...runner }).sandbox).toBe("runner");
    const none = loadConfig({ ...aws, SVC_SANDBOX: "none" });
    expect(none.sandbox).toBe("none");
    const composed = sandbox({ config: none, metrics: new RecordingMetrics(), clock: systemClock });
    expect(composed.sandbox.inner).toBeInstanceOf(NoSandbox);
    await expect(
      composed.sandbox.run({ tenantId: "t", code: "module.exports = () => 1", input: {}, timeoutMs: 1000 }),
    ).rejects.toThrow(/runs no tenant code/);
  });

  it("keeps the child-process sandbox locally", () => {
    expect(loadConfig({}).sandbox).toBe("process");
    expect(loadConfig({ ...runner }).sandbox).toBe("runner");
  });
});

describe("an AWS function without the data key", () => {
  it("starts without touching the file system, and refuses to seal instead of inventing a master key", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-no-kms-"));
    const cfg = loadConfig({
      SVC_MODE: "aws",
      SVC_TABLE_NAME: "svc",
      SVC_SANDBOX: "none",
      SVC_DATA_DIR: join(dataDir, "data"),
    });
    expect(composeCore(cfg).sealer).toBeDefined();
    // Lambda's file system is read-only: a master key file would fail every request of the function.
    expect(existsSync(join(dataDir, "data"))).toBe(false);
    await expect(dataKeyWrapper(cfg).generateDataKey({ tenant: "t" })).rejects.toThrow(/no data key/);
    await expect(dataKeyWrapper(cfg).unwrap(Buffer.alloc(64), { tenant: "t" })).rejects.toThrow(
      /no data key/,
    );
  });
});
