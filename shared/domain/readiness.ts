import { DomainError, type FieldErrors } from "./errors.ts";

/** Each part of GET /healthz's readiness, `ok` or `failed`. */
export interface ReadinessChecks {
  store: "ok" | "failed";
  keys: "ok" | "failed";
}

export interface ReadinessDeps {
  storeHealth: { reachable(): Promise<boolean> };
  keyHealth: { usable(): Promise<boolean> };
}

/** Seconds a prober should wait before asking again (as a store outage's 503 says, shared/http/outage.ts). */
export const NOT_READY_RETRY_AFTER_SECONDS = 2;

/** Both parts at once (each cached about a second by the clock port, store-health.ts and key-health.ts). */
export async function readiness(deps: ReadinessDeps): Promise<ReadinessChecks> {
  const [store, keys] = await Promise.all([deps.storeHealth.reachable(), deps.keyHealth.usable()]);
  return { store: store ? "ok" : "failed", keys: keys ? "ok" : "failed" };
}

const WHY: Record<keyof ReadinessChecks, string> = {
  store: "The data store cannot be reached.",
  keys: "The master key cannot wrap or unwrap a data key.",
};

/** 503 naming the parts that failed (in `errors`, by part), nothing of the keys or the store's answer. */
export function notReady(checks: ReadinessChecks): DomainError {
  const failed = (Object.keys(WHY) as (keyof ReadinessChecks)[]).filter((part) => checks[part] !== "ok");
  const errors: FieldErrors = Object.fromEntries(failed.map((part) => [part, [WHY[part]]]));
  return new DomainError("unavailable", `Not ready: ${failed.map((part) => WHY[part]).join(" ")}`, {
    errors,
    retryAfterSeconds: NOT_READY_RETRY_AFTER_SECONDS,
  });
}
