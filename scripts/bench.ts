/**
 * `npm run bench`: the questions of docs/performance.md (what each scenario measures, the settings, how to read
 * a run), measured on one DynamoDB Local (in memory) with autocannon. The service, the floor and the proxy's
 * destination each run in a Node process of their own (bench/target-process.ts); this process only generates
 * load. Exit 1 when a request or the set-up failed, 130 on Ctrl-C, 0 otherwise (a missed target says FAIL).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printProblems, startParties } from "./bench/parties.ts";
import { machine, writeResults } from "./bench/results.ts";
import { type Measured, RequestFailures, type RunRecord, runScenario } from "./bench/runs.ts";
import { runProxyScenario } from "./bench/scenarios/proxy.ts";
import { measureRewrap } from "./bench/scenarios/rewrap.ts";
import { measureSearch } from "./bench/scenarios/search.ts";
import { runTokenizeBatch } from "./bench/scenarios/tokenize-batch.ts";
import { floorAndService } from "./bench/scenarios/tokenize-read.ts";
import { serviceKeys } from "./bench/service-setup.ts";
import { log, type Scenario, settings, wants } from "./bench/settings.ts";
import { checkInterrupted, cleanUp, onCleanUp, wasInterrupted } from "./bench/shutdown.ts";
import { noiseNote, summarize, summaryTable } from "./bench/summary.ts";

/** Runs the chosen scenarios in order; answers what they measured besides the load runs, and what failed. */
async function runScenarios(dataDir: string, records: RunRecord[]) {
  const measured: Partial<Record<Scenario, Measured>> = {};
  const parties = await startParties(dataDir);
  const { rootKey, service, floor } = parties;
  log("creating a tenant, a public application (token:create) and a private one (token:read)…");
  const keys = await serviceKeys(service.url, rootKey);
  const floorTargets =
    floor && wants("tokenize", "read") ? await floorAndService(floor, service, keys) : undefined;
  try {
    for (const scenario of settings.scenarios) {
      checkInterrupted();
      if ((scenario === "tokenize" || scenario === "read") && floorTargets)
        await runScenario(scenario, floorTargets(scenario), records);
      else if (scenario === "proxy") measured.proxy = await runProxyScenario(parties, keys, records);
      else if (scenario === "search") measured.search = await measureSearch(service.url, rootKey);
      else if (scenario === "tokenize-batch")
        measured[scenario] = await runTokenizeBatch(service, keys.create, records);
      else if (scenario === "rewrap") measured.rewrap = await measureRewrap(service.url, rootKey);
    }
  } catch (error) {
    if (wasInterrupted()) return { measured, failure: "interrupted" };
    if (!(error instanceof RequestFailures)) throw error;
    return { measured, failure: `requests failed in the ${error.message}` };
  }
  return { measured };
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const m = machine();
  log(
    `${m.cpus} × ${m.cpu_model}, Node ${m.node}${m.targets_node === m.node ? "" : ` (targets: ${m.targets_node})`}, load average ${m.load_average_1m}; ${settings.connections} connections, ` +
      `${settings.rounds} rounds × ${settings.durationSeconds} s per target after ${settings.warmupSeconds} s of warm-up; ` +
      `scenarios: ${settings.scenarios.join(", ")}`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  onCleanUp(async () => rmSync(dataDir, { recursive: true, force: true }));
  const records: RunRecord[] = [];
  const { measured, failure } = await runScenarios(dataDir, records);
  const summary = summarize(records);
  if (summary.length > 0) console.log(`\n${summaryTable(summary)}`);
  for (const text of [...Object.values(measured).map((m) => m.report), noiseNote(summary)])
    if (text) console.log(`\n${text}`);
  const figures = Object.fromEntries(Object.entries(measured).map(([scenario, m]) => [scenario, m.figures]));
  const sections = { settings, ...(failure ? { error: failure } : {}), summary, figures, runs: records };
  const file = writeResults(startedAt, m, sections);
  console.log(
    `\nload average (1 min) at start ${m.load_average_1m}, at end ${machine().load_average_1m}; results: ${file}`,
  );
  if (!failure) return 0;
  console.error(`\nFAILED: ${failure}`);
  if (!wasInterrupted()) printProblems();
  return 1;
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
