/**
 * `npm run bench`: the questions of docs/performance.md, measured on one DynamoDB Local (in memory) with
 * autocannon. The service, the floor (scripts/bench/floor-service.ts) and the proxy's destination each run in a
 * Node process of their own (scripts/bench/target-process.ts); this process only generates load. Each load
 * scenario warms its targets up, then alternates their runs (BENCH_ROUNDS) and reports medians:
 *
 * - tokenize, read (the default): floor and service, and the ratio service/floor (target ≥ 90 %);
 * - proxy: the proxy against the proxy floor, a trivial request transform, what it adds at p50 at a fixed rate,
 *   and the first run of new transform code (scenarios/proxy.ts);
 * - search: `data:` search p50 on a large tenant against a small one (scenarios/search.ts);
 * - tokenize-batch: POST /tokenize against single creates (batch.ts);
 * - rewrap: tokens per second a key rewrap re-seals after a rotation (scenarios/rewrap.ts).
 *
 * Exit 1 when a request failed or the set-up failed; exit 0 otherwise, also when a target is missed (FAIL).
 *
 * Environment: BENCH_SCENARIOS (tokenize,read; or any of proxy, search, tokenize-batch, rewrap),
 * BENCH_DURATION_S (5), BENCH_ROUNDS (5), BENCH_WARMUP_S (8), BENCH_CONNECTIONS (16), BENCH_SEED_TOKENS (200),
 * BENCH_NEW_PROXIES (10), BENCH_SEARCH_SMALL / _LARGE / _SAMPLES (200 / 5000 / 100), BENCH_REWRAP_TOKENS (2000),
 * BENCH_NODE_ARGS (extra node flags for the service and the floor, e.g. --cpu-prof), BENCH_TRACE=1 (count and time
 * the targets' DynamoDB calls).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeTokenizeBatch, measureTokenizeBatch } from "./bench/batch.ts";
import { printProblems, startParties } from "./bench/parties.ts";
import { machine, writeResults } from "./bench/results.ts";
import { RequestFailures, type RunRecord, runScenario } from "./bench/runs.ts";
import { describeProxy, type ProxyFigures, runProxyScenario } from "./bench/scenarios/proxy.ts";
import { describeRewrap, measureRewrap } from "./bench/scenarios/rewrap.ts";
import { describeSearch, measureSearch } from "./bench/scenarios/search.ts";
import { floorAndService } from "./bench/scenarios/tokenize-read.ts";
import { serviceKeys, useApplication } from "./bench/service-setup.ts";
import { log, settings, wants } from "./bench/settings.ts";
import { checkInterrupted, cleanUp, onCleanUp, wasInterrupted } from "./bench/shutdown.ts";
import { noiseNote, summarize, summaryTable } from "./bench/summary.ts";

/** Runs the chosen scenarios in order; answers what they measured besides the load runs, and what failed. */
async function runScenarios(dataDir: string, records: RunRecord[]) {
  const figures: { proxy?: ProxyFigures; other: string[]; failure?: string } = { other: [] };
  const { rootKey, service, floor, destination } = await startParties(dataDir);
  log("creating a tenant, a public application (token:create) and a private one (token:read)…");
  const keys = await serviceKeys(service.url, rootKey);
  const use = wants("proxy") ? await useApplication(service.url, keys.management) : undefined;
  const floorTargets =
    floor && wants("tokenize", "read") ? await floorAndService(floor, service, keys) : undefined;
  try {
    for (const scenario of settings.scenarios) {
      checkInterrupted();
      if ((scenario === "tokenize" || scenario === "read") && floorTargets)
        await runScenario(scenario, floorTargets(scenario), records);
      else if (scenario === "proxy" && floor && destination && use)
        figures.proxy = await runProxyScenario(
          {
            service,
            floor,
            destination,
            managementKey: keys.management,
            createKey: keys.create,
            useKey: use.key,
          },
          records,
        );
      else if (scenario === "search")
        figures.other.push(describeSearch(await measureSearch(service.url, rootKey)));
      else if (scenario === "tokenize-batch")
        figures.other.push(describeTokenizeBatch(await measureTokenizeBatch(service.url, keys.create)));
      else if (scenario === "rewrap")
        figures.other.push(describeRewrap(await measureRewrap(service.url, rootKey, settings.rewrapTokens)));
    }
  } catch (error) {
    if (!(error instanceof RequestFailures) && !wasInterrupted()) throw error;
    const failure = wasInterrupted() ? "interrupted" : `requests failed in the ${(error as Error).message}`;
    return { ...figures, failure };
  }
  return figures;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const m = machine();
  log(
    `${m.cpus} × ${m.cpu_model}, Node ${m.node}, load average ${m.load_average_1m}; ${settings.connections} connections, ` +
      `${settings.rounds} rounds × ${settings.durationSeconds} s per target after ${settings.warmupSeconds} s of warm-up; ` +
      `scenarios: ${settings.scenarios.join(", ")}`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  onCleanUp(async () => rmSync(dataDir, { recursive: true, force: true }));
  const records: RunRecord[] = [];
  const { proxy, other, failure } = await runScenarios(dataDir, records);
  const summaries = summarize(records);
  if (summaries.length > 0) console.log(`\n${summaryTable(summaries)}`);
  for (const text of [...(proxy ? [describeProxy(proxy)] : []), ...other, noiseNote(summaries)])
    if (text) console.log(`\n${text}`);
  const file = writeResults(startedAt, m, {
    settings,
    ...(failure ? { error: failure } : {}),
    summary: summaries,
    ...(proxy ? { proxy } : {}),
    runs: records,
  });
  console.log(
    `\nload average (1 min) at start ${m.load_average_1m}, at end ${machine().load_average_1m}; results: ${file}`,
  );
  if (failure) {
    console.error(`\nFAILED: ${failure}`);
    printProblems();
    return 1;
  }
  return 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  console.error(
    wasInterrupted() ? "interrupted" : `FAILED: ${error instanceof Error ? error.message : error}`,
  );
  if (!wasInterrupted()) printProblems();
} finally {
  log("stopping targets and DynamoDB Local…");
  await cleanUp();
}
process.exit(wasInterrupted() ? 130 : exitCode);
