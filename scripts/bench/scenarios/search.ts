/**
 * search: `data:` search p50 on a tenant of BENCH_SEARCH_LARGE tokens (5,000) against one of BENCH_SEARCH_SMALL
 * (200), one request at a time, the two tenants alternating. A blind-index lookup is a Query on one partition
 * per token type whatever the tenant's size, so the target is a ratio of at most 2.
 */
import { randomInt } from "node:crypto";
import { call } from "../../api-call.ts";
import { median } from "../load.ts";
import type { Measured } from "../runs.ts";
import { newApplication, newTenant, seedSearchable } from "../service-setup.ts";
import { log, settings } from "../settings.ts";
import { checkInterrupted } from "../shutdown.ts";
import { verdict } from "../summary.ts";

const TARGET_RATIO = 2;

const ssn = () => `${randomInt(100, 1000)}-${randomInt(10, 100)}-${randomInt(1000, 10_000)}`;

/** A tenant of `count` tokens carrying search indexes, and a searching key. */
async function tenantOf(url: string, rootKey: string, count: number) {
  const management = await newTenant(url, rootKey, "Bench search");
  const values = Array.from({ length: count }, ssn);
  await seedSearchable(url, await newApplication(url, management, "private", ["token:create"]), values);
  return {
    values,
    searcher: await newApplication(url, management, "private", ["token:read", "token:search"]),
  };
}

export async function measureSearch(url: string, rootKey: string): Promise<Measured> {
  const { searchSmall, searchLarge, searchSamples } = settings;
  log(`search: seeding a tenant of ${searchSmall} tokens and one of ${searchLarge}…`);
  const small = await tenantOf(url, rootKey, searchSmall);
  const large = await tenantOf(url, rootKey, searchLarge);
  const once = async ({ values, searcher }: typeof small) => {
    const query = { query: `data:${values[randomInt(values.length)]}` };
    const started = performance.now();
    const page = await call<{ data: unknown[] }>(url, "POST", "/v2/tokens/search", searcher, query, 200);
    const ms = performance.now() - started;
    if (page.data.length < 1) throw new Error("search: a seeded value was not found");
    return ms;
  };
  // Warm-up, then alternate so that both see the same machine load.
  for (let i = 0; i < 20; i++) await Promise.all([once(small), once(large)]);
  const [smallMs, largeMs]: [number[], number[]] = [[], []];
  for (let i = 0; i < searchSamples; i++) {
    checkInterrupted();
    smallMs.push(await once(small));
    largeMs.push(await once(large));
  }
  const small_p50_ms = Number(median(smallMs).toFixed(2));
  const large_p50_ms = Number(median(largeMs).toFixed(2));
  const ratio = Number((large_p50_ms / small_p50_ms).toFixed(2));
  return {
    figures: {
      small_tokens: searchSmall,
      large_tokens: searchLarge,
      samples: searchSamples,
      small_p50_ms,
      large_p50_ms,
      ratio,
    },
    report:
      `search (data:, one at a time, ${searchSamples} samples each): p50 ${small_p50_ms} ms with ${searchSmall} tokens, ` +
      `${large_p50_ms} ms with ${searchLarge}: ${ratio}× (target ≤ ${TARGET_RATIO}×) ${verdict(ratio <= TARGET_RATIO)}`,
  };
}
