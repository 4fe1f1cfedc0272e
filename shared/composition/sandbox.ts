import { LambdaClient } from "@aws-sdk/client-lambda";
import { LambdaSandbox } from "#shared/adapters/aws/lambda-sandbox.ts";
import type { Config } from "#shared/config.ts";
import { NoSandbox } from "#shared/sandbox/none.ts";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";
import type { Sandbox } from "#shared/sandbox/sandbox.ts";

/**
 * Customer code runs in permission-restricted child processes, one per tenant and code version: here
 * locally, in AWS inside the tenant's own runner function.
 * (config.ts refuses AWS mode without the runner settings: never a ProcessSandbox in a Lambda.)
 */
export function sandbox({ config }: { config: Config }): { sandbox: Sandbox } {
  return {
    sandbox:
      config.sandbox === "runner" && config.runner
        ? new LambdaSandbox(new LambdaClient({ region: config.region }), config.runner, config.apiUrl)
        : config.sandbox === "process" && config.mode === "local"
          ? new ProcessSandbox({
              maxProcesses: config.sandboxProcesses,
              maxProcessesPerTenant: config.sandboxTenantProcesses,
            })
          : new NoSandbox(),
  };
}
