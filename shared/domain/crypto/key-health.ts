import { timingSafeEqual } from "node:crypto";
import type { Clock } from "#shared/ports/clock.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import { CachedHealth, HEALTH_CACHE_MS } from "../cached-health.ts";

/**
 * The context of the probe's own data key: never a tenant's (theirs always name `tenant_id`), so the probe
 * key opens nothing and no tenant key is ever unwrapped for a health check.
 */
export const KEY_PROBE_CONTEXT = { purpose: "readiness-probe" } as const;

/** A key probe waits this long at most, as the store probe does (a prober gives up soon). */
export const KEY_PROBE_TIMEOUT_MS = 1000;

/**
 * GET /healthz's view of the keys: whether the master key (KMS in AWS, the local master key file) still wraps
 * and unwraps. The first probe has a data key generated under the probe context; every probe unwraps it and
 * compares: one master-key call per probe after the first, at most once per HEALTH_CACHE_MS (by the clock port).
 * A disabled or deleted KMS key, a revoked grant or a replaced master key fails the unwrap.
 */
export class KeyHealth {
  private readonly cached: CachedHealth;
  private probeKey: { plaintext: Buffer; wrapped: Buffer } | undefined;

  constructor(
    private readonly wrapper: KeyWrapper,
    clock: Clock,
    options: { cacheMs?: number; timeoutMs?: number } = {},
  ) {
    const timeoutMs = options.timeoutMs ?? KEY_PROBE_TIMEOUT_MS;
    this.cached = new CachedHealth(
      () => withTimeout(this.probe(), timeoutMs),
      clock,
      options.cacheMs ?? HEALTH_CACHE_MS,
    );
  }

  usable(): Promise<boolean> {
    return this.cached.healthy();
  }

  private async probe(): Promise<boolean> {
    this.probeKey ??= await this.wrapper.generateDataKey({ ...KEY_PROBE_CONTEXT });
    const { plaintext, wrapped } = this.probeKey;
    const unwrapped = await this.wrapper.unwrap(wrapped, { ...KEY_PROBE_CONTEXT });
    return unwrapped.length === plaintext.length && timingSafeEqual(unwrapped, plaintext);
  }
}

/** `promise`, or false once `ms` passed (the late answer is dropped). */
function withTimeout(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
