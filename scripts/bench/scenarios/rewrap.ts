/**
 * rewrap: a tenant of BENCH_REWRAP_TOKENS tokens (2,000, with a search index each) rotates its keys and re-seals
 * every token with a rewrap job (the local queue and worker); reports tokens per second, from the 202 to the
 * job's `succeeded`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { call } from "../../api-call.ts";
import type { Measured } from "../runs.ts";
import { newApplication, newTenant, seedSearchable } from "../service-setup.ts";
import { log, settings } from "../settings.ts";
import { checkInterrupted } from "../shutdown.ts";

export async function measureRewrap(url: string, rootKey: string): Promise<Measured> {
  const tokens = settings.rewrapTokens;
  log(`rewrap: seeding a tenant of ${tokens} tokens…`);
  const management = await newTenant(url, rootKey, "Bench rewrap");
  const owner = await newApplication(url, management, "private", ["token:create"]);
  await seedSearchable(
    url,
    owner,
    Array.from({ length: tokens }, (_, i) => `rewrap-${i}`),
  );
  await call(url, "POST", "/tenants/self/keys/rotate", management, undefined, 200);
  const started = performance.now();
  const job = await call<{ id: string }>(
    url,
    "POST",
    "/tenants/self/keys/rewrap",
    management,
    undefined,
    202,
  );
  for (;;) {
    checkInterrupted();
    const path = `/tenants/self/keys/rewrap/${job.id}`;
    const { status } = await call<{ status: string }>(url, "GET", path, management, undefined, 200);
    if (status === "failed") throw new Error("rewrap: the job failed");
    if (status === "succeeded") break;
    await sleep(50);
  }
  const seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  const perSecond = Math.round(tokens / seconds);
  return {
    figures: { tokens, seconds, tokens_per_second: perSecond },
    report: `rewrap (local store, after a rotation): ${tokens} tokens re-sealed in ${seconds} s, ${perSecond} tokens/s`,
  };
}
