/**
 * The rewrap scenario: a tenant of BENCH_REWRAP_TOKENS tokens (2,000, with a search index each) rotates its keys
 * and re-seals every token with a rewrap job (the local queue and worker); reports tokens per second, from the
 * 202 to the job's `succeeded`.
 */
import { call } from "../api.ts";

export interface RewrapFigures {
  tokens: number;
  seconds: number;
  tokens_per_second: number;
}

export async function measureRewrap(url: string, rootKey: string, tokens: number): Promise<RewrapFigures> {
  const tenant = await call<{ management_key: string }>(
    url,
    "POST",
    "/tenants",
    rootKey,
    { name: "Bench rewrap" },
    201,
  );
  const mgt = tenant.management_key;
  const owner = await call<{ key: string }>(
    url,
    "POST",
    "/applications",
    mgt,
    { name: "bench rewrap", type: "private", permissions: ["token:create"] },
    201,
  );
  for (let i = 0; i < tokens; i += 100) {
    const body = Array.from({ length: Math.min(100, tokens - i) }, (_, j) => ({
      type: "token",
      data: { ssn: `rewrap-${i + j}` },
      search_indexes: ["{{ data.ssn }}"],
    }));
    await call(url, "POST", "/tokenize", owner.key, body, 201);
  }
  await call(url, "POST", "/tenants/self/keys/rotate", mgt, undefined, 200);
  const started = performance.now();
  const job = await call<{ id: string }>(url, "POST", "/tenants/self/keys/rewrap", mgt, undefined, 202);
  for (;;) {
    const now = await call<{ status: string; done: number }>(
      url,
      "GET",
      `/tenants/self/keys/rewrap/${job.id}`,
      mgt,
      undefined,
      200,
    );
    if (now.status === "failed") throw new Error("rewrap: the job failed");
    if (now.status === "succeeded") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  return { tokens, seconds: Number(seconds.toFixed(2)), tokens_per_second: Math.round(tokens / seconds) };
}

export function describeRewrap(f: RewrapFigures): string {
  return `rewrap (local store, after a rotation): ${f.tokens} tokens re-sealed in ${f.seconds} s, ${f.tokens_per_second} tokens/s`;
}
