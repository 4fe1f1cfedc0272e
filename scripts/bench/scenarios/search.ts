/**
 * The search scenario: `data:` search p50 on a tenant of BENCH_SEARCH_LARGE tokens (5,000) against one of
 * BENCH_SEARCH_SMALL (200), one request at a time, the two tenants alternating. A blind-index lookup is a Query
 * on one partition per token type whatever the tenant's size, so the target is a ratio of at most 2.
 */
import { randomInt } from "node:crypto";
import { call } from "../api.ts";
import { median } from "../load.ts";
import { log, settings } from "../settings.ts";
import { checkInterrupted } from "../shutdown.ts";
import { verdict } from "../summary.ts";

export const SEARCH_TARGET_RATIO = 2;

export interface SearchFigures {
  small_tokens: number;
  large_tokens: number;
  samples: number;
  small_p50_ms: number;
  large_p50_ms: number;
  ratio: number;
  pass: boolean;
}

const ssn = () => `${randomInt(100, 1000)}-${randomInt(10, 100)}-${randomInt(1000, 10_000)}`;

/** A tenant with `count` tokens carrying search indexes (through /tokenize, 100 a call), and a searching key. */
async function tenantOf(url: string, rootKey: string, count: number) {
  const tenant = await call<{ management_key: string }>(
    url,
    "POST",
    "/tenants",
    rootKey,
    { name: "Bench search" },
    201,
  );
  const key = (permissions: string[]) =>
    call<{ key: string }>(
      url,
      "POST",
      "/applications",
      tenant.management_key,
      { name: "bench search", type: "private", permissions },
      201,
    ).then((app) => app.key);
  const owner = await key(["token:create"]);
  const searcher = await key(["token:read", "token:search"]);
  const values: string[] = [];
  const batches = Math.ceil(count / 100);
  let next = 0;
  const worker = async () => {
    while (next < batches) {
      checkInterrupted();
      const batch = next++;
      const size = Math.min(100, count - batch * 100);
      const body = Array.from({ length: size }, () => {
        const value = ssn();
        values.push(value);
        return { type: "token", data: { ssn: value }, search_indexes: ["{{ data.ssn }}"] };
      });
      await call(url, "POST", "/tokenize", owner, body, 201);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { searcher, values };
}

export async function measureSearch(url: string, rootKey: string): Promise<SearchFigures> {
  const { searchSmall, searchLarge, searchSamples } = settings;
  log(`search: seeding a tenant of ${searchSmall} tokens and one of ${searchLarge}…`);
  const small = await tenantOf(url, rootKey, searchSmall);
  const large = await tenantOf(url, rootKey, searchLarge);
  const once = async (tenant: typeof small) => {
    const value = tenant.values[randomInt(tenant.values.length)] as string;
    const started = performance.now();
    const page = await call<{ data: unknown[] }>(
      url,
      "POST",
      "/v2/tokens/search",
      tenant.searcher,
      { query: `data:${value}` },
      200,
    );
    const ms = performance.now() - started;
    if (page.data.length < 1) throw new Error("search: a seeded value was not found");
    return ms;
  };
  // Warm-up, then alternate so that both see the same machine load.
  for (let i = 0; i < 20; i++) await Promise.all([once(small), once(large)]);
  const smallMs: number[] = [];
  const largeMs: number[] = [];
  for (let i = 0; i < searchSamples; i++) {
    checkInterrupted();
    smallMs.push(await once(small));
    largeMs.push(await once(large));
  }
  const small_p50_ms = Number(median(smallMs).toFixed(2));
  const large_p50_ms = Number(median(largeMs).toFixed(2));
  const ratio = Number((large_p50_ms / small_p50_ms).toFixed(2));
  return {
    small_tokens: searchSmall,
    large_tokens: searchLarge,
    samples: searchSamples,
    small_p50_ms,
    large_p50_ms,
    ratio,
    pass: ratio <= SEARCH_TARGET_RATIO,
  };
}

export function describeSearch(f: SearchFigures): string {
  return (
    `search (data:, one at a time, ${f.samples} samples each): p50 ${f.small_p50_ms} ms with ${f.small_tokens} tokens, ` +
    `${f.large_p50_ms} ms with ${f.large_tokens}: ${f.ratio}× (target ≤ ${SEARCH_TARGET_RATIO}×) ${verdict(f.pass)}`
  );
}
