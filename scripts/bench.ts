/**
 * `npm run bench`: the service against its floor (scripts/bench/floor-service.ts), on one DynamoDB Local, with
 * autocannon. See docs/performance.md.
 *
 * One DynamoDB Local (in memory) serves both. The service and the floor each run in their own Node process
 * (scripts/bench/target-process.ts); this process only generates load. For each scenario (tokenize, read) it
 * warms both targets up, then alternates floor and service runs, and reports medians and the ratio
 * service/floor. Exit 1 when any request failed (non-2xx, connection error, timeout) or the set-up failed;
 * exit 0 otherwise, also when a ratio target is missed (the table says FAIL).
 *
 * Environment: BENCH_DURATION_S (5), BENCH_ROUNDS (3), BENCH_WARMUP_S (8), BENCH_CONNECTIONS (16),
 * BENCH_SEED_TOKENS (200), BENCH_CARDS (fixed | unique: the same card number in every create, or a new one),
 * BENCH_SCENARIOS (tokenize,read), BENCH_NODE_ARGS (extra node flags for both targets, e.g. --cpu-prof),
 * BENCH_TRACE=1 (count and time the targets' DynamoDB calls; adds a little work to both).
 */
import { spawnSync } from "node:child_process";
import { randomInt, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { type DynamoDbLocal, startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";
import { childPids, cpuSeconds, machineBusySeconds, ownCpuSeconds } from "./bench/cpu.ts";
import { median, type RunFigures, runLoad, stopCurrentLoad } from "./bench/load.ts";
import type { TargetName } from "./bench/target-process.ts";
import { type RunningTarget, startTarget } from "./bench/targets.ts";

type Scenario = "tokenize" | "read";

const TARGET_RATIO: Record<Scenario, number> = { tokenize: 0.5, read: 0.6 };
const CARD = { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 };

function intEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${raw}`);
  return value;
}

const settings = {
  durationSeconds: intEnv("BENCH_DURATION_S", 5, 1, 600),
  rounds: intEnv("BENCH_ROUNDS", 3, 1, 50),
  warmupSeconds: intEnv("BENCH_WARMUP_S", 8, 0, 600),
  connections: intEnv("BENCH_CONNECTIONS", 16, 1, 1024),
  seedTokens: intEnv("BENCH_SEED_TOKENS", 200, 1, 100_000),
  cards: (process.env.BENCH_CARDS || "fixed") as "fixed" | "unique",
  scenarios: (process.env.BENCH_SCENARIOS || "tokenize,read").split(",").map((s) => s.trim()) as Scenario[],
  nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter(Boolean),
  trace: process.env.BENCH_TRACE === "1",
};
if (settings.cards !== "fixed" && settings.cards !== "unique")
  throw new Error(`BENCH_CARDS must be fixed or unique, got ${settings.cards}`);
for (const scenario of settings.scenarios)
  if (scenario !== "tokenize" && scenario !== "read")
    throw new Error(`BENCH_SCENARIOS lists tokenize and/or read, got ${scenario}`);

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** A Luhn-valid 16-digit Visa-like number, so that BENCH_CARDS=unique creates pass validation. */
function randomCardNumber(): string {
  const digits = [4, ...Array.from({ length: 14 }, () => randomInt(10))];
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // Counting from the check digit (position 0, at the right end), every odd position is doubled.
    let d = digits[digits.length - 1 - i] as number;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return [...digits, (10 - (sum % 10)) % 10].join("");
}

const cardBody = () =>
  JSON.stringify({
    type: "card",
    data: settings.cards === "unique" ? { ...CARD, number: randomCardNumber() } : CARD,
  });

// ---------------------------------------------------------------------------------------------------------
// Shutdown: everything started is stopped in reverse order, on success, on error and on Ctrl-C.

const cleanups: (() => Promise<void>)[] = [];
let interrupted = false;

async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop() as () => Promise<void>;
    await step().catch((error: unknown) => console.error("clean-up step failed:", error));
  }
}

process.on("SIGINT", () => {
  if (interrupted) return;
  interrupted = true;
  log("interrupted: stopping…");
  stopCurrentLoad();
});

function checkInterrupted(): void {
  if (interrupted) throw new Error("interrupted");
}

// ---------------------------------------------------------------------------------------------------------
// Set-up through the public HTTP API.

async function call<T>(
  base: string,
  method: string,
  path: string,
  key: string | undefined,
  body: unknown,
  expected: number,
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key ? { "svc-api-key": key } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expected)
    throw new Error(`${method} ${path} answered ${res.status} (expected ${expected}): ${text.slice(0, 500)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function serviceKeys(url: string, rootKey: string) {
  const tenant = await call<{ management_key: string }>(
    url,
    "POST",
    "/tenants",
    rootKey,
    { name: "Bench" },
    201,
  );
  const application = (type: "public" | "private", permission: string) =>
    call<{ key: string }>(
      url,
      "POST",
      "/applications",
      tenant.management_key,
      { name: `bench ${type}`, type, permissions: [permission] },
      201,
    ).then((app) => app.key);
  return {
    create: await application("public", "token:create"),
    read: await application("private", "token:read"),
  };
}

/** Creates `count` card tokens through POST /tokens, 16 at a time, and returns their ids. */
async function seed(url: string, key: string | undefined, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const token = await call<{ id: string }>(url, "POST", "/tokens", key, cardBody(), 201);
      ids.push(token.id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, count) }, worker));
  return ids;
}

// ---------------------------------------------------------------------------------------------------------
// The runs.

interface Target {
  name: TargetName;
  running: RunningTarget;
  createKey?: string;
  readKey?: string;
  ids: string[];
}

/** CPU per request (ms) of each party during a run, and the share of the machine the run left to others. */
interface CpuFigures {
  target_ms_per_request?: number;
  dynamodb_local_ms_per_request?: number;
  load_generator_ms_per_request: number;
  /** Machine busy time not spent by the three (other people's processes, the idle target, the kernel), % of all cores. */
  others_pct?: number;
}

interface RunRecord extends RunFigures {
  scenario: Scenario;
  target: TargetName;
  round: number;
  cpu: CpuFigures;
  /** With BENCH_TRACE=1: DynamoDB calls per request of the target, and their mean duration. */
  dynamodb_calls?: Record<
    string,
    { per_request: number; attempts_per_request: number; failed_per_request: number; mean_ms: number }
  >;
}

interface Summary {
  scenario: Scenario;
  target: TargetName;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  target_cpu_ms_per_request?: number;
  dynamodb_local_cpu_ms_per_request?: number;
  load_generator_cpu_ms_per_request?: number;
  /**
   * Floor's CPU per request (all three processes) over the service's: the ratio of throughputs a CPU-bound
   * machine would give. It barely moves when other processes take CPU, unlike req/s; a cross-check only.
   */
  cpu_ratio?: number;
  /** Median share of the machine (% of all cores) used by other processes during the runs: noise. */
  others_pct?: number;
  ratio?: number;
  target_ratio?: number;
  pass?: boolean;
}

function loadFor(scenario: Scenario, target: Target, durationSeconds: number) {
  const key = scenario === "tokenize" ? target.createKey : target.readKey;
  const headers: Record<string, string> = key ? { "svc-api-key": key } : {};
  if (scenario === "tokenize")
    return runLoad({
      url: target.running.url,
      connections: settings.connections,
      durationSeconds,
      headers: { ...headers, "content-type": "application/json" },
      method: "POST",
      path: () => "/tokens",
      body: cardBody,
    });
  let next = 0;
  return runLoad({
    url: target.running.url,
    connections: settings.connections,
    durationSeconds,
    headers,
    method: "GET",
    path: () => `/tokens/${encodeURIComponent(target.ids[next++ % target.ids.length] as string)}`,
  });
}

let dynamoPid: number | undefined;

/** One load run with the CPU spent by target, DynamoDB Local and load generator (and DynamoDB calls, traced). */
async function measuredRun(scenario: Scenario, target: Target, durationSeconds: number) {
  const sum = (values: (number | undefined)[]) =>
    values.every((v) => v !== undefined) ? (values as number[]).reduce((a, b) => a + b, 0) : undefined;
  const sample = () => ({
    target: cpuSeconds(target.running.pid),
    dynamo: dynamoPid === undefined ? undefined : cpuSeconds(dynamoPid),
    self: ownCpuSeconds(),
    machine: machineBusySeconds(),
    at: performance.now(),
  });
  if (settings.trace) await target.running.calls();
  const before = sample();
  const figures = await loadFor(scenario, target, durationSeconds);
  const after = sample();
  const calls = settings.trace ? await target.running.calls() : undefined;
  const n = Math.max(1, figures.requests);
  const delta = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : b - a;
  const perRequest = (seconds: number | undefined) =>
    seconds === undefined ? undefined : Number(((seconds * 1000) / n).toFixed(2));
  const targetCpu = delta(before.target, after.target);
  const dynamoCpu = delta(before.dynamo, after.dynamo);
  const selfCpu = after.self - before.self;
  const machineCpu = delta(before.machine, after.machine);
  const ours = sum([targetCpu, dynamoCpu, selfCpu]);
  const wall = (after.at - before.at) / 1000;
  const cpu: CpuFigures = {
    target_ms_per_request: perRequest(targetCpu),
    dynamodb_local_ms_per_request: perRequest(dynamoCpu),
    load_generator_ms_per_request: perRequest(selfCpu) as number,
    others_pct:
      machineCpu === undefined || ours === undefined
        ? undefined
        : Number(((Math.max(0, machineCpu - ours) / wall / cpus().length) * 100).toFixed(1)),
  };
  const dynamodb_calls = calls
    ? Object.fromEntries(
        Object.entries(calls).map(([name, c]) => [
          name,
          {
            per_request: Number((c.count / n).toFixed(2)),
            attempts_per_request: Number((c.attempts / n).toFixed(2)),
            failed_per_request: Number((c.failed / n).toFixed(2)),
            mean_ms: Number((c.ms / c.count).toFixed(1)),
          },
        ]),
      )
    : undefined;
  return { figures, cpu, dynamodb_calls };
}

const failures = (f: RunFigures) => f.non2xx + f.errors + f.timeouts;

function describe(f: RunFigures, cpu: CpuFigures, calls?: RunRecord["dynamodb_calls"]): string {
  const rate = `${f.rps.toFixed(0).padStart(5)} req/s`;
  const latency = `p50 ${f.p50.toFixed(0).padStart(3)} ms, p99 ${f.p99.toFixed(0).padStart(4)} ms`;
  const ms = (v: number | undefined) => (v === undefined ? "?" : v.toFixed(2));
  const cpuText =
    `CPU ms/req: target ${ms(cpu.target_ms_per_request)}, DynamoDB Local ${ms(cpu.dynamodb_local_ms_per_request)}, ` +
    `autocannon ${ms(cpu.load_generator_ms_per_request)}; others ${cpu.others_pct ?? "?"} %`;
  const callText = calls
    ? `\n      DynamoDB calls/req: ${Object.entries(calls)
        .map(
          ([name, c]) =>
            `${name} ${c.per_request} × ${c.mean_ms} ms` +
            (c.failed_per_request ? ` (${c.failed_per_request} failed)` : "") +
            (c.attempts_per_request > c.per_request ? ` (${c.attempts_per_request} attempts)` : ""),
        )
        .join(", ")}`
    : "";
  const failed = failures(f)
    ? `; ${failures(f)} FAILED: status ${JSON.stringify(f.statusCodes)}, errors ${f.errors}, timeouts ${f.timeouts}`
    : "";
  return `${rate}  ${latency}  (${f.requests} req; ${cpuText})${failed}${callText}`;
}

async function runScenario(scenario: Scenario, targets: Target[], records: RunRecord[]): Promise<void> {
  for (const target of targets) {
    if (settings.warmupSeconds === 0) break;
    checkInterrupted();
    log(`${scenario}: warm-up ${target.name} (${settings.warmupSeconds} s)…`);
    const { figures, cpu, dynamodb_calls } = await measuredRun(scenario, target, settings.warmupSeconds);
    log(`${scenario}: warm-up ${target.name}: ${describe(figures, cpu, dynamodb_calls)}`);
    if (failures(figures) > 0) throw new RequestFailures(`${scenario} warm-up of ${target.name}`);
  }
  for (let round = 1; round <= settings.rounds; round++) {
    for (const target of targets) {
      checkInterrupted();
      const { figures, cpu, dynamodb_calls } = await measuredRun(scenario, target, settings.durationSeconds);
      records.push({ scenario, target: target.name, round, ...figures, cpu, dynamodb_calls });
      log(
        `${scenario}: round ${round}/${settings.rounds} ${target.name.padEnd(7)} ${describe(figures, cpu, dynamodb_calls)}`,
      );
      if (failures(figures) > 0) throw new RequestFailures(`${scenario} round ${round} of ${target.name}`);
    }
  }
}

class RequestFailures extends Error {}

const medianOf = (values: (number | undefined)[]) => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length ? Number(median(known).toFixed(2)) : undefined;
};

function totalCpu(s: Summary): number | undefined {
  const parts = [
    s.target_cpu_ms_per_request,
    s.dynamodb_local_cpu_ms_per_request,
    s.load_generator_cpu_ms_per_request,
  ];
  return parts.every((p) => p !== undefined) ? (parts as number[]).reduce((a, b) => a + b, 0) : undefined;
}

function summarize(records: RunRecord[]): Summary[] {
  const summaries: Summary[] = [];
  for (const scenario of settings.scenarios) {
    const of = (target: TargetName) => records.filter((r) => r.scenario === scenario && r.target === target);
    const floor = of("floor");
    const service = of("service");
    if (floor.length === 0 || service.length === 0) continue;
    const summary = (target: TargetName, runs: RunRecord[]): Summary => ({
      scenario,
      target,
      rounds: runs.length,
      rps: Number(median(runs.map((r) => r.rps)).toFixed(1)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      target_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.target_ms_per_request)),
      dynamodb_local_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.dynamodb_local_ms_per_request)),
      load_generator_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.load_generator_ms_per_request)),
      others_pct: medianOf(runs.map((r) => r.cpu.others_pct)),
    });
    const floorSummary = summary("floor", floor);
    const serviceSummary = summary("service", service);
    const ratio = Number((serviceSummary.rps / floorSummary.rps).toFixed(3));
    const floorCpu = totalCpu(floorSummary);
    const serviceCpu = totalCpu(serviceSummary);
    summaries.push(floorSummary, {
      ...serviceSummary,
      ratio,
      ...(floorCpu && serviceCpu ? { cpu_ratio: Number((floorCpu / serviceCpu).toFixed(3)) } : {}),
      target_ratio: TARGET_RATIO[scenario],
      pass: ratio >= TARGET_RATIO[scenario],
    });
  }
  return summaries;
}

function table(summaries: Summary[]): string {
  const header = [
    "scenario",
    "target",
    "req/s (median)",
    "p50 ms",
    "p99 ms",
    "CPU ms/req target + DDB Local",
    "service/floor",
    "target",
    "result",
  ];
  const ms = (v: number | undefined) => (v === undefined ? "?" : v.toFixed(2));
  const rows = summaries.map((s) => [
    s.scenario,
    s.target,
    s.rps.toFixed(0),
    s.p50.toFixed(0),
    s.p99.toFixed(0),
    `${ms(s.target_cpu_ms_per_request)} + ${ms(s.dynamodb_local_cpu_ms_per_request)}`,
    s.ratio === undefined ? "" : `${(s.ratio * 100).toFixed(0)} %`,
    s.target_ratio === undefined ? "" : `≥ ${(s.target_ratio * 100).toFixed(0)} %`,
    s.pass === undefined ? "" : s.pass ? "PASS" : "FAIL",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const right = new Set([2, 3, 4, 5, 6]);
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** A warning when other processes took a noticeable share of the machine during the measured runs. */
function noiseNote(summaries: Summary[]): string | undefined {
  const noisy = summaries.filter((s) => (s.others_pct ?? 0) >= 5);
  if (noisy.length === 0) return undefined;
  const list = noisy.map((s) => `${s.scenario}/${s.target} ${s.others_pct} %`).join(", ");
  return `WARNING: other processes used a median share of the ${cpus().length} cores during the runs (${list}); the figures are skewed.`;
}

function machine() {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpu_model: cores[0]?.model ?? "unknown",
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    /** Other work on the machine skews the figures: the 1-minute load average when this was taken. */
    load_average_1m: Number(loadavg()[0]?.toFixed(2)),
  };
}

function writeResults(
  startedAt: Date,
  machineAtStart: ReturnType<typeof machine>,
  records: RunRecord[],
  summaries: Summary[],
  error?: string,
): string {
  const dir = resolve(".bench");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "results.json");
  const results = {
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    code: codeVersion(),
    machine_at_start: machineAtStart,
    machine_at_end: machine(),
    settings: { ...settings, target_ratios: TARGET_RATIO },
    ...(error ? { error } : {}),
    summary: summaries,
    runs: records,
  };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

// ---------------------------------------------------------------------------------------------------------

const runningTargets: RunningTarget[] = [];

/** The targets' last logged errors, to explain a failure (their logs are not shown otherwise). */
function printProblems(): void {
  for (const target of runningTargets) {
    const problems = target.problems();
    if (problems.length === 0) continue;
    console.error(`\nlast errors logged by the ${target.name}:`);
    for (const line of problems) console.error(`  ${line.slice(0, 2000)}`);
  }
}

/** Which code was measured: the commit and how many files differ from it. */
function codeVersion() {
  const git = (...args: string[]) => spawnSync("git", args, { encoding: "utf8" }).stdout?.trim() ?? "";
  return {
    commit: git("rev-parse", "HEAD") || "unknown",
    uncommitted_files: git("status", "--porcelain").split("\n").filter(Boolean).length,
  };
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const m = machine();
  log(
    `${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, Node ${m.node}, load average ${m.load_average_1m}; ${settings.connections} connections, ` +
      `${settings.rounds} rounds × ${settings.durationSeconds} s per target and scenario after ${settings.warmupSeconds} s of warm-up; cards: ${settings.cards}`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));

  log("starting DynamoDB Local (in memory)…");
  const dynamo: DynamoDbLocal = await startDynamoDbLocal({});
  cleanups.push(() => dynamo.stop());
  dynamoPid = childPids("java")[0];
  checkInterrupted();

  const rootKey = `key_root_bench_${randomUUID()}`;
  log("starting the service and the floor (one child process each)…");
  const [service, floor] = await Promise.all([
    startTarget(
      "service",
      {
        BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
        BENCH_DATA_DIR: join(dataDir, "service"),
        BENCH_ROOT_KEY: rootKey,
      },
      join(dataDir, "service.log"),
      settings.nodeArgs,
    ),
    startTarget(
      "floor",
      { BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint, BENCH_DATA_DIR: join(dataDir, "floor") },
      join(dataDir, "floor.log"),
      settings.nodeArgs,
    ),
  ]);
  cleanups.push(
    () => service.stop(),
    () => floor.stop(),
  );
  runningTargets.push(service, floor);
  log(`service at ${service.url} (pid ${service.pid}), floor at ${floor.url} (pid ${floor.pid})`);
  checkInterrupted();

  log("creating a tenant, a public application (token:create) and a private one (token:read)…");
  const keys = await serviceKeys(service.url, rootKey);
  log(`seeding ${settings.seedTokens} card tokens in each target…`);
  const [serviceIds, floorIds] = await Promise.all([
    seed(service.url, keys.create, settings.seedTokens),
    seed(floor.url, undefined, settings.seedTokens),
  ]);
  // One read of each, so that a broken read path fails here rather than after the tokenize scenario.
  await call(service.url, "GET", `/tokens/${serviceIds[0]}`, keys.read, undefined, 200);
  await call(floor.url, "GET", `/tokens/${floorIds[0]}`, undefined, undefined, 200);

  const targets: Target[] = [
    { name: "floor", running: floor, ids: floorIds },
    { name: "service", running: service, createKey: keys.create, readKey: keys.read, ids: serviceIds },
  ];
  const records: RunRecord[] = [];
  let failure: string | undefined;
  try {
    for (const scenario of settings.scenarios) await runScenario(scenario, targets, records);
  } catch (error) {
    if (!(error instanceof RequestFailures) && !interrupted) throw error;
    failure = interrupted
      ? "interrupted"
      : `requests failed in the ${error instanceof Error ? error.message : ""}`;
  }

  const summaries = summarize(records);
  console.log("");
  if (summaries.length > 0) console.log(table(summaries));
  if (summaries.length > 0) console.log("");
  for (const s of summaries.filter((x) => x.cpu_ratio !== undefined))
    console.log(
      `${s.scenario}: CPU per request (service, DynamoDB Local and autocannon together) is ` +
        `${((1 / (s.cpu_ratio as number)) * 100).toFixed(0)} % of the floor's, ` +
        `i.e. a CPU-bound ratio of ${((s.cpu_ratio as number) * 100).toFixed(0)} % (cross-check of the measured ${((s.ratio as number) * 100).toFixed(0)} %).`,
    );
  const noise = noiseNote(summaries);
  if (noise) console.log(`\n${noise}`);
  const file = writeResults(startedAt, m, records, summaries, failure);
  console.log(
    `\nload average (1 min) at start ${m.load_average_1m}, at end ${machine().load_average_1m}; results: ${file}`,
  );
  if (failure) {
    console.error(`\nFAILED: ${failure}; the figures above are not valid.`);
    if (!interrupted) printProblems();
    return interrupted ? 130 : 1;
  }
  return 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  console.error(interrupted ? "interrupted" : `FAILED: ${error instanceof Error ? error.message : error}`);
  if (!interrupted) printProblems();
  exitCode = interrupted ? 130 : 1;
} finally {
  log("stopping targets and DynamoDB Local…");
  await cleanUp();
}
process.exit(exitCode);
