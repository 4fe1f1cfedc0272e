import { LambdaClient } from "@aws-sdk/client-lambda";
import { LambdaSandbox } from "#shared/adapters/aws/lambda-sandbox.ts";
import type { Config } from "#shared/config.ts";
import { MeteredSandbox } from "#shared/observability/metered-sandbox.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";
import { NoSandbox } from "#shared/sandbox/none.ts";
import { traced } from "#shared/tracer.ts";

/**
 * Where a function runs customer code in AWS: inside the tenant's own runner function, or nowhere
 * (SVC_SANDBOX=none). config.ts refuses AWS mode without the runner settings, so a Lambda never runs tenant
 * code in its own process; the local hosting composes the child-process pool instead (functions/local.ts).
 */
export function awsSandbox(config: Config): Sandbox {
  return config.sandbox === "runner" && config.runner
    ? new LambdaSandbox(traced(new LambdaClient({ region: config.region })), config.runner, config.apiUrl, {
        outboundLimits: config.sandboxFetch,
      })
    : new NoSandbox();
}

/** The function's sandbox (`chosen`, else awsSandbox), its runs measured (MeteredSandbox). */
export function sandbox(
  deps: { config: Config; metrics: Metrics; clock: Clock },
  chosen: Sandbox = awsSandbox(deps.config),
): { sandbox: Sandbox & Pick<MeteredSandbox, "inner"> } {
  return { sandbox: new MeteredSandbox(chosen, deps) };
}
