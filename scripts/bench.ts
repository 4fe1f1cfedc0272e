/**
 * `npm run bench`: the service against its floor (scripts/bench/floor-service.ts), on one DynamoDB Local, with
 * autocannon (fixed-rate runs: scripts/bench/paced.ts); the proxy against the proxy floor and against calling a slow destination directly; react; and the
 * size and cold import time of every function bundle. See docs/performance.md.
 *
 * One DynamoDB Local (in memory) serves both. The service, the floor and the proxy's destination each run in
 * their own Node process (scripts/bench/target-process.ts); this process only generates load. For each
 * scenario it warms its targets up, then alternates their runs, and reports medians:
 *
 * - tokenize, read: floor and service, and the ratio service/floor;
 * - proxy: `proxy` (POST /proxy, one detokenization) against the proxy floor, `proxy, slow destination` against
 *   calling a destination that answers after 20 ms directly, `proxy+transform` (a trivial request transform),
 *   what the warm transform adds at p50; then, without load, one request at a time, the transform alone in a
 *   sandbox, and the first request through proxies with new transform code (scripts/bench/scenarios/proxy.ts,
 *   scripts/bench/proxy.ts);
 * - react: a trivial formula, warm (no target to compare with);
 * - react-outbound: react with one fetch to the destination against a plain fetch (scripts/bench/react-outbound.ts);
 * - runner-cold-start: a runner function's cold start with and without the package set
 *   (scripts/bench/runner-cold-start.ts; needs no service);
 * - bundles: each function group's bundle size and cold import time (scripts/bench/scenarios/bundles.ts); it
 *   runs first, before any other party of the bench is started;
 * - tokenize-batch, import: tokens/s through POST /tokenize (25 per call) against single POST /tokens, and
 *   `svc-vault import` records/s and peak RSS (scripts/bench/batch.ts; BENCH_IMPORT_LINES, 100000);
 * - elements: elements.js's gzipped size and, in chromium, mount → ready of a card element
 *   (scripts/bench/elements.ts; BENCH_ELEMENTS_MOUNTS, 20).
 *
 * Exit 1 when any request failed (non-2xx, connection error, timeout) or the set-up failed; exit 0 otherwise,
 * also when a target is missed (the output says FAIL).
 *
 * Environment: BENCH_DURATION_S (5), BENCH_ROUNDS (3), BENCH_WARMUP_S (8), BENCH_CONNECTIONS (16),
 * BENCH_SEED_TOKENS (200), BENCH_CARDS (fixed | unique: the same card number in every create, or a new one),
 * BENCH_SCENARIOS (tokenize,read,proxy,react,react-outbound,runner-cold-start,bundles,elements,search,tokenize-batch,import),
 * BENCH_SEARCH_SMALL / BENCH_SEARCH_LARGE / BENCH_SEARCH_SAMPLES (200 / 5000 / 100: search p50 on a tenant of
 * each size, one request at a time; target: large ≤ 2× small, scenarios/search.ts), BENCH_LATENCY_SAMPLES (200: unloaded requests per proxy target
 * and warm sandbox runs), BENCH_NEW_PROXIES (10: new proxies per first-request series), BENCH_COLD_STARTS (7: runner cold starts with
 * and without the packages), BENCH_NODE_ARGS
 * (extra node flags for the service and the floor, e.g. --cpu-prof), BENCH_TRACE=1 (count and time the
 * targets' DynamoDB calls; adds a little work to both).
 *
 * The pieces: settings.ts (environment), runs.ts (a load run and its CPU figures), summary.ts and tables.ts
 * (medians, comparisons, printing), results.ts (.bench/results.json), and one module per scenario under
 * scenarios/: its targets, how its rounds are summarized, and what it prints.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call } from "./bench/api.ts";
import { describeImport, describeTokenizeBatch, measureImport, measureTokenizeBatch } from "./bench/batch.ts";
import { describeElements, type ElementsFigures, measureElements } from "./bench/elements.ts";
import { printProblems, startParties } from "./bench/parties.ts";
import { type ProxyLatency, type ProxySetup, setUpProxies } from "./bench/proxy.ts";
import { setUpReactor } from "./bench/react.ts";
import {
  describeReactOutbound,
  measureReactOutbound,
  REACT_OUTBOUND_TARGET_MS,
  type ReactOutboundLatency,
} from "./bench/react-outbound.ts";
import { machine, writeResults } from "./bench/results.ts";
import { describeRunnerColdStart, measureRunnerColdStart } from "./bench/runner-cold-start.ts";
import { RequestFailures, type RunRecord, runScenario } from "./bench/runs.ts";
import { bundlesTable, measureBundles } from "./bench/scenarios/bundles.ts";
import {
  NEW_CODE_TARGET_MS,
  PROXY_OF_FLOOR_TARGET,
  runProxyScenario,
  SLOW_TARGET_RATIO,
  summarizeProxy,
  TRANSFORM_ADDS_TARGET_MS,
} from "./bench/scenarios/proxy.ts";
import { printProxyLatency, proxyChecks, proxyTable } from "./bench/scenarios/proxy-report.ts";
import { reactTable, reactTarget, summarizeReact } from "./bench/scenarios/react.ts";
import { describeSearch, measureSearch, type SearchFigures } from "./bench/scenarios/search.ts";
import {
  FLOOR_TARGET_RATIO,
  type FloorOrService,
  floorServiceTarget,
  printFloorScenarios,
  summarizeFloorScenario,
} from "./bench/scenarios/tokenize-read.ts";
import { seed, serviceKeys, useApplication } from "./bench/service-setup.ts";
import { CARD, floorScenarios, log, STANDALONE_SCENARIOS, settings } from "./bench/settings.ts";
import { checkInterrupted, cleanUp, onCleanUp, wasInterrupted } from "./bench/shutdown.ts";
import { noiseNote, type Summary } from "./bench/summary.ts";
import { verdict } from "./bench/tables.ts";
import { intEnv } from "./int-env.ts";

/** Each scenario's summaries, in the order the scenarios ran. */
function summarize(records: RunRecord[]): Summary[] {
  return settings.scenarios.flatMap((scenario) => {
    if (scenario === "tokenize" || scenario === "read") return summarizeFloorScenario(scenario, records);
    if (scenario === "proxy") return summarizeProxy(records);
    if (scenario === "react") return summarizeReact(records);
    return []; // bundles: figures of their own, no load runs
  });
}

/** The scenarios that put load on the service: start-up, set-up through the API, then each scenario's runs. */
async function runLoadScenarios(
  dataDir: string,
  records: RunRecord[],
): Promise<{
  proxyLatency?: ProxyLatency;
  outboundLatency?: ReactOutboundLatency;
  elements?: ElementsFigures;
  search?: SearchFigures;
  failure?: string;
}> {
  const wantsProxy = settings.scenarios.includes("proxy");
  const wantsReact = settings.scenarios.includes("react");
  const wantsOutbound = settings.scenarios.includes("react-outbound");
  const { rootKey, service, floor, destination } = await startParties(dataDir);

  log("creating a tenant, a public application (token:create) and a private one (token:read)…");
  const keys = await serviceKeys(service.url, rootKey);
  const targets: FloorOrService[] = [];
  if (floor && floorScenarios.length > 0) {
    log(`seeding ${settings.seedTokens} card tokens in each target…`);
    const [serviceIds, floorIds] = await Promise.all([
      seed(service.url, keys.create, settings.seedTokens),
      seed(floor.url, undefined, settings.seedTokens),
    ]);
    // One read of each, so that a broken read path fails here rather than after the tokenize scenario.
    await call(service.url, "GET", `/tokens/${serviceIds[0]}`, keys.read, undefined, 200);
    await call(floor.url, "GET", `/tokens/${floorIds[0]}`, undefined, undefined, 200);
    targets.push(
      { name: "floor", running: floor, ids: floorIds },
      { name: "service", running: service, createKey: keys.create, readKey: keys.read, ids: serviceIds },
    );
  }
  const use =
    wantsProxy || wantsReact || wantsOutbound
      ? await useApplication(service.url, keys.management)
      : undefined;
  let proxySetup: ProxySetup | undefined;
  if (destination && floor && use) {
    log(
      "creating a card token and three proxies to the destination: plain, with a request transform, and to its slow path…",
    );
    proxySetup = await setUpProxies({
      serviceUrl: service.url,
      floorUrl: floor.url,
      managementKey: keys.management,
      createKey: keys.create,
      useKey: use.key,
      destinationUrl: destination.url,
      card: CARD,
    });
  }
  let reactPath: string | undefined;
  if (wantsReact && use) {
    log("creating a trivial formula and a reactor…");
    reactPath = await setUpReactor({
      serviceUrl: service.url,
      managementKey: keys.management,
      applicationId: use.id,
      useKey: use.key,
    });
  }
  let proxyLatency: ProxyLatency | undefined;
  let outboundLatency: ReactOutboundLatency | undefined;
  let elements: ElementsFigures | undefined;
  let search: SearchFigures | undefined;
  try {
    for (const scenario of settings.scenarios) {
      if (scenario === "tokenize" || scenario === "read")
        await runScenario(
          scenario,
          targets.map((t) => floorServiceTarget(scenario, t)),
          records,
        );
      else if (scenario === "proxy" && destination && floor && proxySetup)
        proxyLatency = await runProxyScenario({
          service,
          floor,
          destination,
          setup: proxySetup,
          managementKey: keys.management,
          records,
        });
      else if (scenario === "react" && reactPath && use)
        await runScenario(scenario, [reactTarget(service, reactPath, use.key)], records);
      else if (scenario === "react-outbound" && destination && use)
        outboundLatency = await measureReactOutbound({
          serviceUrl: service.url,
          managementKey: keys.management,
          applicationId: use.id,
          useKey: use.key,
          destinationUrl: destination.url,
          samples: settings.latencySamples,
          log,
          check: checkInterrupted,
        });
      else if (scenario === "tokenize-batch")
        console.log(`\n${describeTokenizeBatch(await measureTokenizeBatch(service.url, keys.create))}\n`);
      else if (scenario === "import")
        console.log(
          `\n${describeImport(await measureImport(service.url, keys.create, dataDir, intEnv("BENCH_IMPORT_LINES", 100_000, 10, 10_000_000)))}\n`,
        );
      else if (scenario === "elements")
        elements = await measureElements({
          serviceUrl: service.url,
          rootKey,
          samples: settings.elementsMounts,
          log,
        });
      else if (scenario === "search")
        search = await measureSearch({
          serviceUrl: service.url,
          rootKey,
          small: settings.searchSmall,
          large: settings.searchLarge,
          samples: settings.searchSamples,
          log,
          check: checkInterrupted,
        });
    }
  } catch (error) {
    if (!(error instanceof RequestFailures) && !wasInterrupted()) throw error;
    return {
      proxyLatency,
      outboundLatency,
      elements,
      search,
      failure: wasInterrupted()
        ? "interrupted"
        : `requests failed in the ${error instanceof Error ? error.message : ""}`,
    };
  }
  return { proxyLatency, outboundLatency, elements, search };
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const m = machine();
  log(
    `${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, Node ${m.node}, load average ${m.load_average_1m}; ${settings.connections} connections, ` +
      `${settings.rounds} rounds × ${settings.durationSeconds} s per target and scenario after ${settings.warmupSeconds} s of warm-up; ` +
      `scenarios: ${settings.scenarios.join(", ")}; cards: ${settings.cards}`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  onCleanUp(async () => rmSync(dataDir, { recursive: true, force: true }));
  const records: RunRecord[] = [];
  let proxyLatency: ProxyLatency | undefined;
  let outboundLatency: ReactOutboundLatency | undefined;
  let elements: ElementsFigures | undefined;
  let search: SearchFigures | undefined;
  let failure: string | undefined;
  // First, while no other party of the bench runs: it starts processes of its own.
  const bundles = settings.scenarios.includes("bundles")
    ? await measureBundles({ log, check: checkInterrupted })
    : undefined;
  if (settings.scenarios.some((scenario) => !STANDALONE_SCENARIOS.includes(scenario)))
    ({ proxyLatency, outboundLatency, elements, search, failure } = await runLoadScenarios(dataDir, records));

  const summaries = summarize(records);
  const checks = proxyChecks(proxyLatency);
  const outboundPass = outboundLatency && outboundLatency.outbound_adds_p50_ms <= REACT_OUTBOUND_TARGET_MS;
  if (outboundLatency)
    checks.push({
      scenario: "react-outbound",
      what: "one outbound fetch adds over a plain fetch at p50, warm, one request at a time",
      value_ms: outboundLatency.outbound_adds_p50_ms,
      target_ms: REACT_OUTBOUND_TARGET_MS,
      pass: outboundPass === true,
    });
  const floorSummaries = summaries.filter((s) => s.scenario === "tokenize" || s.scenario === "read");
  const proxySummaries = summaries.filter((s) => s.scenario === "proxy");
  const reactSummaries = summaries.filter((s) => s.scenario === "react");
  console.log("");
  if (floorSummaries.length > 0) printFloorScenarios(floorSummaries);
  if (proxySummaries.length > 0 || proxyLatency) {
    if (floorSummaries.length > 0) console.log("");
    if (proxySummaries.length > 0) console.log(`${proxyTable(proxySummaries)}\n`);
    printProxyLatency(proxySummaries, proxyLatency, checks);
  }
  if (reactSummaries.length > 0) console.log(`\n${reactTable(reactSummaries)}`);
  if (outboundLatency) console.log(`\n${describeReactOutbound(outboundLatency)} ${verdict(outboundPass)}`);
  // Measured after the load scenarios, alone: it starts Node processes of its own and needs no service.
  if (settings.scenarios.includes("runner-cold-start") && !failure)
    console.log(
      `\n${describeRunnerColdStart(await measureRunnerColdStart(intEnv("BENCH_COLD_STARTS", 7, 1, 50), log))}`,
    );
  if (bundles) console.log(`\n${bundlesTable(bundles)}`);
  if (elements) console.log(`\n${describeElements(elements)}`);
  if (search) console.log(`\n${describeSearch(search)}`);
  const noise = noiseNote(summaries);
  if (noise) console.log(`\n${noise}`);
  const file = writeResults(startedAt, m, {
    settings: {
      ...settings,
      target_ratios: {
        ...FLOOR_TARGET_RATIO,
        proxy: { of_floor: PROXY_OF_FLOOR_TARGET, of_slow_destination: SLOW_TARGET_RATIO },
      },
      transform_adds_target_ms: TRANSFORM_ADDS_TARGET_MS,
      new_code_target_ms: NEW_CODE_TARGET_MS,
    },
    ...(failure ? { error: failure } : {}),
    summary: summaries,
    ...(checks.length ? { checks } : {}),
    ...(proxyLatency ? { proxy_latency: proxyLatency } : {}),
    ...(outboundLatency ? { react_outbound: outboundLatency } : {}),
    ...(bundles ? { bundles } : {}),
    ...(elements ? { elements } : {}),
    ...(search ? { search } : {}),
    runs: records,
  });
  console.log(
    `\nload average (1 min) at start ${m.load_average_1m}, at end ${machine().load_average_1m}; results: ${file}`,
  );
  if (failure) {
    console.error(`\nFAILED: ${failure}; the figures above are not valid.`);
    if (!wasInterrupted()) printProblems();
    return wasInterrupted() ? 130 : 1;
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
  exitCode = wasInterrupted() ? 130 : 1;
} finally {
  log("stopping targets and DynamoDB Local…");
  await cleanUp();
}
process.exit(exitCode);
