import { SSMClient } from "@aws-sdk/client-ssm";
import { SsmRootKeyVerifier } from "#shared/adapters/aws/ssm-root-key.ts";
import { StaticRootKeyVerifier } from "#shared/adapters/local/root-key.ts";
import type { Config } from "#shared/config.ts";
import { hashKey } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { RootKeyVerifier } from "#shared/ports/root-key.ts";
import { traced } from "#shared/tracer.ts";

/**
 * The root key of groups with root routes (system, tenants; FUNCTION_ACCESS.rootKeyParameter): the SSM
 * parameter in AWS, else the hash held in memory. Pass as `composeCore(cfg, { rootKey: rootKeyVerifier })`.
 */
export function rootKeyVerifier(cfg: Config, clock: Clock): RootKeyVerifier {
  return cfg.rootKeyParameter
    ? new SsmRootKeyVerifier(traced(new SSMClient({ region: cfg.region })), cfg.rootKeyParameter, clock)
    : new StaticRootKeyVerifier(cfg.rootKeyHash ?? (cfg.rootKey ? hashKey(cfg.rootKey) : undefined));
}
