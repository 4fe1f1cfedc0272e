/**
 * `npm run bench`: the service against its floor (scripts/bench/floor-service.ts), on one DynamoDB Local, with
 * autocannon; the proxy against direct requests to its loopback destination; and react. See
 * docs/performance.md.
 *
 * One DynamoDB Local (in memory) serves both. The service, the floor and the proxy's destination each run in
 * their own Node process (scripts/bench/target-process.ts); this process only generates load. For each
 * scenario it warms its targets up, then alternates their runs, and reports medians:
 *
 * - tokenize, read: floor and service, and the ratio service/floor;
 * - proxy: `direct` (POST to the destination), `proxy` (POST /proxy, one detokenization) and `proxy+transform`
 *   (a trivial request transform), the ratio proxy/direct, what the warm transform adds at p50; then, without
 *   load, one request at a time, the same targets, the transform alone in a sandbox, and the first request
 *   through proxies with new transform code (scripts/bench/proxy.ts);
 * - react: a trivial formula, warm (no target to compare with);
 * - react-outbound: react with one fetch to the destination against a plain fetch (scripts/bench/react-outbound.ts);
 * - runner-cold-start: a runner function's cold start with and without the package set
 *   (scripts/bench/runner-cold-start.ts; needs no service).
 *
 * Exit 1 when any request failed (non-2xx, connection error, timeout) or the set-up failed; exit 0 otherwise,
 * also when a target is missed (the output says FAIL).
 *
 * Environment: BENCH_DURATION_S (5), BENCH_ROUNDS (3), BENCH_WARMUP_S (8), BENCH_CONNECTIONS (16),
 * BENCH_SEED_TOKENS (200), BENCH_CARDS (fixed | unique: the same card number in every create, or a new one),
 * BENCH_SCENARIOS (tokenize,read,proxy,react,react-outbound,runner-cold-start), BENCH_LATENCY_SAMPLES (200:
 * unloaded requests per proxy target and warm sandbox runs), BENCH_NEW_PROXIES (10: new proxies per
 * first-request series), BENCH_COLD_STARTS (7: runner cold starts with and without the packages), BENCH_NODE_ARGS
 * (extra node flags for the service and the floor, e.g. --cpu-prof), BENCH_TRACE=1 (count and time the
 * targets' DynamoDB calls; adds a little work to both).
 */
import { spawnSync } from "node:child_process";
import { randomInt, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { type DynamoDbLocal, startDynamoDbLocal } from "#shared/local/dynamodb-local.ts";
import { call } from "./bench/api.ts";
import {
  childPids,
  cpuSeconds,
  descendantPids,
  machineBusySeconds,
  ownCpuSeconds,
  treeCpuDelta,
  treeCpuSeconds,
} from "./bench/cpu.ts";
import { median, type RunFigures, runLoad, stopCurrentLoad } from "./bench/load.ts";
import {
  DESTINATION_PATH,
  describeStats,
  type FixedRateLatency,
  measureProxyLatency,
  type NewCodeSeries,
  type ProxyLatency,
  type ProxySetup,
  proxyHeaders,
  setUpProxies,
} from "./bench/proxy.ts";
import { REACT_BODY, setUpReactor } from "./bench/react.ts";
import {
  describeReactOutbound,
  measureReactOutbound,
  REACT_OUTBOUND_TARGET_MS,
  type ReactOutboundLatency,
} from "./bench/react-outbound.ts";
import { describeRunnerColdStart, measureRunnerColdStart } from "./bench/runner-cold-start.ts";
import { type RunningTarget, startTarget } from "./bench/targets.ts";
import { intEnv } from "./int-env.ts";

type Scenario = "tokenize" | "read" | "proxy" | "react" | "react-outbound" | "runner-cold-start";
const SCENARIOS: Scenario[] = ["tokenize", "read", "proxy", "react", "react-outbound", "runner-cold-start"];
/** What a run measured: floor or service (tokenize, read, react), or one of the proxy scenario's targets. */
type TargetLabel = "floor" | "service" | "direct" | "pass-through" | "proxy" | "proxy+transform";

/** Share of the comparison target's req/s: floor for tokenize and read, direct for proxy. */
const TARGET_RATIO: Partial<Record<Scenario, number>> = { tokenize: 0.5, read: 0.6, proxy: 0.5 };
/** The issue's targets for proxy transforms: a warm one adds at most 5 ms at p50, new code runs within 150 ms. */
const TRANSFORM_ADDS_TARGET_MS = 5;
const NEW_CODE_TARGET_MS = 150;
const CARD = { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 };

const settings = {
  durationSeconds: intEnv("BENCH_DURATION_S", 5, 1, 600),
  rounds: intEnv("BENCH_ROUNDS", 3, 1, 50),
  warmupSeconds: intEnv("BENCH_WARMUP_S", 8, 0, 600),
  connections: intEnv("BENCH_CONNECTIONS", 16, 1, 1024),
  seedTokens: intEnv("BENCH_SEED_TOKENS", 200, 1, 100_000),
  cards: (process.env.BENCH_CARDS || "fixed") as "fixed" | "unique",
  scenarios: (process.env.BENCH_SCENARIOS || SCENARIOS.join(","))
    .split(",")
    .map((s) => s.trim()) as Scenario[],
  latencySamples: intEnv("BENCH_LATENCY_SAMPLES", 200, 1, 100_000),
  newProxies: intEnv("BENCH_NEW_PROXIES", 10, 1, 100),
  nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter(Boolean),
  trace: process.env.BENCH_TRACE === "1",
};
if (settings.cards !== "fixed" && settings.cards !== "unique")
  throw new Error(`BENCH_CARDS must be fixed or unique, got ${settings.cards}`);
for (const scenario of settings.scenarios)
  if (!SCENARIOS.includes(scenario))
    throw new Error(`BENCH_SCENARIOS lists some of ${SCENARIOS.join(", ")}, got ${scenario}`);
const floorScenarios = settings.scenarios.filter((s) => s === "tokenize" || s === "read");

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
    management: tenant.management_key,
    create: await application("public", "token:create"),
    read: await application("private", "token:read"),
  };
}

/** A private application with token:use: the caller of /proxy and react, and the reactor's application. */
function useApplication(url: string, managementKey: string) {
  return call<{ id: string; key: string }>(
    url,
    "POST",
    "/applications",
    managementKey,
    { name: "bench use", type: "private", permissions: ["token:use"] },
    201,
  );
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

/** A floor or service target of the tokenize and read scenarios. */
interface Target {
  name: "floor" | "service";
  running: RunningTarget;
  createKey?: string;
  readKey?: string;
  ids: string[];
}

/** What one load run hits, and whose CPU it counts. */
interface LoadTarget {
  label: TargetLabel;
  /** The process answering the requests; its descendants (the service's sandbox processes) count with it. */
  pid: number;
  /** The proxy's destination, a process of its own, counted separately. */
  destinationPid?: number;
  /** Whose DynamoDB calls BENCH_TRACE counts. */
  traced?: RunningTarget;
  /** With `overallRate`, at that many requests per second rather than as fast as answered. */
  load(durationSeconds: number, overallRate?: number): Promise<RunFigures>;
}

/** CPU per request (ms) of each party during a run, and the share of the machine the run left to others. */
interface CpuFigures {
  /** The target process and its descendants (the service's sandbox processes). */
  target_ms_per_request?: number;
  /** Of which the descendants: the service's sandbox processes (reported when not zero). */
  sandbox_ms_per_request?: number;
  /** The proxy scenario: the destination (for `direct`, that is the target). */
  destination_ms_per_request?: number;
  dynamodb_local_ms_per_request?: number;
  load_generator_ms_per_request: number;
  /** Machine busy time not spent by the parties (other people's processes, idle targets, the kernel), % of all cores. */
  others_pct?: number;
}

interface RunRecord extends RunFigures {
  scenario: Scenario;
  target: TargetLabel;
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
  target: TargetLabel;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  target_cpu_ms_per_request?: number;
  /** Of which the service's sandbox processes. */
  sandbox_cpu_ms_per_request?: number;
  destination_cpu_ms_per_request?: number;
  dynamodb_local_cpu_ms_per_request?: number;
  load_generator_cpu_ms_per_request?: number;
  /**
   * The comparison target's CPU per request (all processes) over this one's (floor/service, direct/proxy): the
   * ratio of throughputs a CPU-bound machine would give. It barely moves when other processes take CPU,
   * unlike req/s; a cross-check only.
   */
  cpu_ratio?: number;
  /** Median share of the machine (% of all cores) used by other processes during the runs: noise. */
  others_pct?: number;
  /** req/s over the comparison target's (floor for tokenize and read, direct for proxy). */
  ratio?: number;
  /** Proxy scenario: req/s over the proxy floor's (the proxy's mandatory work, scripts/bench/floor-service.ts). */
  of_floor?: number;
  target_ratio?: number;
  pass?: boolean;
}

/** A latency target of the proxy scenario, with its measured value. */
interface Check {
  scenario: Scenario;
  what: string;
  value_ms: number;
  target_ms: number;
  pass: boolean;
}

function loadFor(scenario: "tokenize" | "read", target: Target, durationSeconds: number) {
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

const floorServiceTarget = (scenario: "tokenize" | "read", target: Target): LoadTarget => ({
  label: target.name,
  pid: target.running.pid,
  traced: target.running,
  load: (durationSeconds) => loadFor(scenario, target, durationSeconds),
});

/** A POST of a fixed body with fixed headers, as autocannon runs them. */
const postLoad =
  (url: string, path: string, headers: Record<string, string>, body: string) =>
  (durationSeconds: number, overallRate?: number) =>
    runLoad({
      url,
      connections: settings.connections,
      durationSeconds,
      headers,
      method: "POST",
      path: () => path,
      body: () => body,
      ...(overallRate ? { overallRate } : {}),
    });

function proxyTargets(
  service: RunningTarget,
  floor: RunningTarget,
  destination: RunningTarget,
  setup: ProxySetup,
): LoadTarget[] {
  const json = { "content-type": "application/json" };
  const viaFloor = (label: TargetLabel, path: string, body: string): LoadTarget => ({
    label,
    pid: floor.pid,
    destinationPid: destination.pid,
    traced: floor,
    load: postLoad(floor.url, path, json, body),
  });
  const through = (label: TargetLabel, proxyKey: string): LoadTarget => ({
    label,
    pid: service.pid,
    destinationPid: destination.pid,
    traced: service,
    load: postLoad(service.url, "/proxy", proxyHeaders(proxyKey, setup.useKey), setup.proxyBody),
  });
  return [
    {
      label: "direct",
      pid: destination.pid,
      load: postLoad(destination.url, DESTINATION_PATH, json, setup.directBody),
    },
    viaFloor("pass-through", "/pass", setup.directBody),
    viaFloor("floor", `/proxy/${encodeURIComponent(setup.floorCardTokenId)}`, setup.proxyBody),
    through("proxy", setup.proxyKey),
    through("proxy+transform", setup.transformProxyKey),
  ];
}

const reactTarget = (service: RunningTarget, path: string, useKey: string): LoadTarget => ({
  label: "service",
  pid: service.pid,
  traced: service,
  load: postLoad(
    service.url,
    path,
    { "svc-api-key": useKey, "content-type": "application/json" },
    REACT_BODY,
  ),
});

/**
 * proxy and proxy+transform alternately at one fixed rate, half of what proxy+transform sustained: what the
 * transform adds to a request under load, without the queueing of a saturated machine.
 */
async function fixedRateLatency(targets: LoadTarget[], records: RunRecord[]): Promise<FixedRateLatency> {
  const saturated = records.filter((r) => r.scenario === "proxy" && r.target === "proxy+transform");
  const rate = Math.max(10, Math.floor(median(saturated.map((r) => r.rps)) / 2 / 10) * 10);
  const result: FixedRateLatency = {
    rate_rps: rate,
    proxy_p50_ms: [],
    transform_p50_ms: [],
    transform_adds_p50_ms: 0,
  };
  const proxy = targets.find((t) => t.label === "proxy");
  const transform = targets.find((t) => t.label === "proxy+transform");
  if (!proxy || !transform) return result;
  for (let round = 1; round <= settings.rounds; round++)
    for (const [target, p50s] of [
      [proxy, result.proxy_p50_ms],
      [transform, result.transform_p50_ms],
    ] as const) {
      checkInterrupted();
      const figures = await target.load(settings.durationSeconds, rate);
      log(
        `proxy: round ${round}/${settings.rounds} ${target.label} at ${rate} req/s: ${figures.rps.toFixed(0)} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms`,
      );
      if (failures(figures) > 0)
        throw new RequestFailures(`proxy fixed-rate round ${round} of ${target.label}`);
      p50s.push(figures.p50);
    }
  result.transform_adds_p50_ms = Number(
    (median(result.transform_p50_ms) - median(result.proxy_p50_ms)).toFixed(2),
  );
  return result;
}

let dynamoPid: number | undefined;

/**
 * One load run with the CPU spent by target (with its sandbox processes), destination, DynamoDB Local and load
 * generator (and DynamoDB calls, traced).
 */
async function measuredRun(target: LoadTarget, durationSeconds: number) {
  const sum = (values: (number | undefined)[]) =>
    values.every((v) => v !== undefined) ? (values as number[]).reduce((a, b) => a + b, 0) : undefined;
  const sample = () => ({
    target: treeCpuSeconds(target.pid),
    destination: target.destinationPid === undefined ? undefined : cpuSeconds(target.destinationPid),
    dynamo: dynamoPid === undefined ? undefined : cpuSeconds(dynamoPid),
    self: ownCpuSeconds(),
    machine: machineBusySeconds(),
    at: performance.now(),
  });
  if (settings.trace) await target.traced?.calls();
  const before = sample();
  const figures = await target.load(durationSeconds);
  const after = sample();
  const calls = settings.trace ? await target.traced?.calls() : undefined;
  const n = Math.max(1, figures.requests);
  const delta = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : b - a;
  const perRequest = (seconds: number | undefined) =>
    seconds === undefined ? undefined : Number(((seconds * 1000) / n).toFixed(2));
  const targetTree = treeCpuDelta(target.pid, before.target, after.target);
  const targetCpu = targetTree?.total;
  const sandboxMs = perRequest(targetTree?.descendants);
  const destinationCpu = delta(before.destination, after.destination);
  const dynamoCpu = delta(before.dynamo, after.dynamo);
  const selfCpu = after.self - before.self;
  const machineCpu = delta(before.machine, after.machine);
  const ours = sum([
    targetCpu,
    dynamoCpu,
    selfCpu,
    ...(target.destinationPid === undefined ? [] : [destinationCpu]),
  ]);
  const wall = (after.at - before.at) / 1000;
  const cpu: CpuFigures = {
    target_ms_per_request: perRequest(targetCpu),
    ...(sandboxMs ? { sandbox_ms_per_request: sandboxMs } : {}),
    ...(target.destinationPid === undefined
      ? {}
      : { destination_ms_per_request: perRequest(destinationCpu) }),
    dynamodb_local_ms_per_request: perRequest(dynamoCpu),
    load_generator_ms_per_request: perRequest(selfCpu) as number,
    others_pct:
      machineCpu === undefined || ours === undefined
        ? undefined
        : Number(((Math.max(0, machineCpu - ours) / wall / cpus().length) * 100).toFixed(1)),
  };
  const dynamodb_calls =
    calls && Object.keys(calls).length > 0
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
  const destination =
    "destination_ms_per_request" in cpu ? `, destination ${ms(cpu.destination_ms_per_request)}` : "";
  const sandbox = cpu.sandbox_ms_per_request ? ` (sandbox ${ms(cpu.sandbox_ms_per_request)})` : "";
  const cpuText =
    `CPU ms/req: target ${ms(cpu.target_ms_per_request)}${sandbox}${destination}, DynamoDB Local ${ms(cpu.dynamodb_local_ms_per_request)}, ` +
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

async function runScenario(scenario: Scenario, targets: LoadTarget[], records: RunRecord[]): Promise<void> {
  for (const target of targets) {
    if (settings.warmupSeconds === 0) break;
    checkInterrupted();
    log(`${scenario}: warm-up ${target.label} (${settings.warmupSeconds} s)…`);
    const { figures, cpu, dynamodb_calls } = await measuredRun(target, settings.warmupSeconds);
    log(`${scenario}: warm-up ${target.label}: ${describe(figures, cpu, dynamodb_calls)}`);
    if (failures(figures) > 0) throw new RequestFailures(`${scenario} warm-up of ${target.label}`);
  }
  const width = Math.max(...targets.map((t) => t.label.length));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const target of targets) {
      checkInterrupted();
      const { figures, cpu, dynamodb_calls } = await measuredRun(target, settings.durationSeconds);
      records.push({ scenario, target: target.label, round, ...figures, cpu, dynamodb_calls });
      log(
        `${scenario}: round ${round}/${settings.rounds} ${target.label.padEnd(width)} ${describe(figures, cpu, dynamodb_calls)}`,
      );
      if (failures(figures) > 0) throw new RequestFailures(`${scenario} round ${round} of ${target.label}`);
    }
  }
}

class RequestFailures extends Error {}

const medianOf = (values: (number | undefined)[]) => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length ? Number(median(known).toFixed(2)) : undefined;
};

/** CPU per request of all parties: target, DynamoDB Local, autocannon, and the destination when separate. */
function totalCpu(s: Summary): number | undefined {
  const parts = [
    s.target_cpu_ms_per_request,
    s.dynamodb_local_cpu_ms_per_request,
    s.load_generator_cpu_ms_per_request,
  ];
  return parts.every((p) => p !== undefined)
    ? (parts as number[]).reduce((a, b) => a + b, 0) + (s.destination_cpu_ms_per_request ?? 0)
    : undefined;
}

function summarize(records: RunRecord[]): Summary[] {
  const summaries: Summary[] = [];
  for (const scenario of settings.scenarios) {
    const of = (target: TargetLabel) => records.filter((r) => r.scenario === scenario && r.target === target);
    const summary = (target: TargetLabel, runs: RunRecord[]): Summary => ({
      scenario,
      target,
      rounds: runs.length,
      rps: Number(median(runs.map((r) => r.rps)).toFixed(1)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      target_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.target_ms_per_request)),
      ...(runs.some((r) => r.cpu.sandbox_ms_per_request !== undefined)
        ? { sandbox_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.sandbox_ms_per_request ?? 0)) }
        : {}),
      ...(runs.some((r) => r.cpu.destination_ms_per_request !== undefined)
        ? { destination_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.destination_ms_per_request)) }
        : {}),
      dynamodb_local_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.dynamodb_local_ms_per_request)),
      load_generator_cpu_ms_per_request: medianOf(runs.map((r) => r.cpu.load_generator_ms_per_request)),
      others_pct: medianOf(runs.map((r) => r.cpu.others_pct)),
    });
    /** `against` compared with `base`: req/s ratio, CPU-bound ratio and, when the scenario has one, the target. */
    const compared = (against: Summary, base: Summary, withTarget: boolean): Summary => {
      const ratio = Number((against.rps / base.rps).toFixed(3));
      const baseCpu = totalCpu(base);
      const cpu = totalCpu(against);
      const target = TARGET_RATIO[scenario];
      return {
        ...against,
        ratio,
        ...(baseCpu && cpu ? { cpu_ratio: Number((baseCpu / cpu).toFixed(3)) } : {}),
        ...(withTarget && target !== undefined ? { target_ratio: target, pass: ratio >= target } : {}),
      };
    };
    if (scenario === "tokenize" || scenario === "read") {
      const floor = of("floor");
      const service = of("service");
      if (floor.length === 0 || service.length === 0) continue;
      const floorSummary = summary("floor", floor);
      summaries.push(floorSummary, compared(summary("service", service), floorSummary, true));
    } else if (scenario === "proxy") {
      const direct = of("direct");
      if (direct.length === 0) continue;
      const directSummary = summary("direct", direct);
      summaries.push(directSummary);
      const floorRuns = of("floor");
      const floorRps = floorRuns.length > 0 ? summary("floor", floorRuns).rps : undefined;
      for (const label of ["pass-through", "floor", "proxy", "proxy+transform"] as const) {
        const runs = of(label);
        if (runs.length === 0) continue;
        const s = compared(summary(label, runs), directSummary, label === "proxy");
        const ofFloor =
          label.startsWith("proxy") && floorRps ? Number((s.rps / floorRps).toFixed(3)) : undefined;
        summaries.push(ofFloor === undefined ? s : { ...s, of_floor: ofFloor });
      }
    } else {
      const service = of("service");
      if (service.length > 0) summaries.push(summary("service", service));
    }
  }
  return summaries;
}

function renderTable(header: string[], rows: string[][], right: Set<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

const ms2 = (v: number | undefined) => (v === undefined ? "?" : v.toFixed(2));
const pct = (ratio: number | undefined) =>
  ratio === undefined ? "" : `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)} %`;
const verdict = (pass: boolean | undefined) => (pass === undefined ? "" : pass ? "PASS" : "FAIL");

/** The first columns of every table, and their cells. */
const LEAD_HEADER = ["scenario", "target", "req/s (median)", "p50 ms", "p99 ms"];
const leadCells = (s: Summary) => [
  s.scenario,
  s.target,
  s.rps.toFixed(0),
  s.p50.toFixed(0),
  s.p99.toFixed(0),
];
const targetCell = (s: Summary) =>
  s.target_ratio === undefined ? "" : `≥ ${(s.target_ratio * 100).toFixed(0)} %`;

/** Tokenize and read: floor against service. */
function table(summaries: Summary[]): string {
  const header = [...LEAD_HEADER, "CPU ms/req target + DDB Local", "service/floor", "target", "result"];
  const rows = summaries.map((s) => [
    ...leadCells(s),
    `${ms2(s.target_cpu_ms_per_request)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`,
    pct(s.ratio),
    targetCell(s),
    verdict(s.pass),
  ]);
  return renderTable(header, rows, new Set([2, 3, 4, 5, 6]));
}

const serviceCpu = (s: Summary) =>
  `${ms2(s.target_cpu_ms_per_request)}${s.sandbox_cpu_ms_per_request ? ` (${ms2(s.sandbox_cpu_ms_per_request)})` : ""}`;

/** Proxy: direct, pass-through, floor, proxy and proxy+transform. */
function proxyTable(summaries: Summary[]): string {
  const header = [
    ...LEAD_HEADER,
    "CPU ms/req proxy (of which sandbox) + destination + DDB Local",
    "of direct",
    "target",
    "result",
    "of floor",
  ];
  const rows = summaries.map((s) => [
    ...leadCells(s),
    s.target === "direct"
      ? `– + ${ms2(s.target_cpu_ms_per_request)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`
      : `${serviceCpu(s)} + ${ms2(s.destination_cpu_ms_per_request)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`,
    pct(s.ratio),
    targetCell(s),
    verdict(s.pass),
    pct(s.of_floor),
  ]);
  return renderTable(header, rows, new Set([2, 3, 4, 5, 6, 9]));
}

/** React: the service alone. */
function reactTable(summaries: Summary[]): string {
  const header = [...LEAD_HEADER, "CPU ms/req service (of which sandbox) + DDB Local"];
  const rows = summaries.map((s) => [
    ...leadCells(s),
    `${serviceCpu(s)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`,
  ]);
  return renderTable(header, rows, new Set([2, 3, 4, 5]));
}

/** The proxy scenario's latency targets, from the fixed-rate runs and the unloaded measurements. */
function proxyChecks(latency: ProxyLatency | undefined): Check[] {
  const checks: Check[] = [];
  const check = (what: string, value: number, target: number) =>
    checks.push({
      scenario: "proxy",
      what,
      value_ms: Number(value.toFixed(2)),
      target_ms: target,
      pass: value <= target,
    });
  if (latency?.fixed_rate)
    check(
      `warm transform adds at p50 under load (${latency.fixed_rate.rate_rps} req/s)`,
      latency.fixed_rate.transform_adds_p50_ms,
      TRANSFORM_ADDS_TARGET_MS,
    );
  if (latency) {
    check(
      "warm transform adds at p50, one request at a time",
      latency.sequential_transform_adds_p50_ms,
      TRANSFORM_ADDS_TARGET_MS,
    );
    check("first run of new transform code, max, 1 s apart", latency.new_code.first.max, NEW_CODE_TARGET_MS);
    check(
      "first run of new transform code, max, back to back",
      latency.new_code_back_to_back.first.max,
      NEW_CODE_TARGET_MS,
    );
  }
  return checks;
}

function printProxyLatency(summaries: Summary[], latency: ProxyLatency | undefined, checks: Check[]): void {
  const of = (target: TargetLabel) => summaries.find((s) => s.scenario === "proxy" && s.target === target);
  const direct = of("direct");
  const proxy = of("proxy");
  const transform = of("proxy+transform");
  const result = (what: string) => {
    const c = checks.find((x) => x.what === what);
    return c ? ` (target ≤ ${c.target_ms} ms): ${verdict(c.pass)}` : "";
  };
  for (const s of [proxy, transform])
    if (s?.cpu_ratio !== undefined && direct)
      console.log(
        `proxy: CPU per request of ${s.target} (service with its sandbox processes, destination, DynamoDB Local ` +
          `and autocannon) is ${(1 / s.cpu_ratio).toFixed(0)} × direct's, i.e. a CPU-bound ratio of ` +
          `${pct(s.cpu_ratio)} (cross-check of the measured ${pct(s.ratio)}).`,
      );
  const passThrough = of("pass-through");
  const floor = of("floor");
  if (passThrough && floor && proxy)
    console.log(
      `proxy: what bounds the ratio to direct: a bare Node proxy that only forwards (pass-through) did ` +
        `${pct(passThrough.ratio)} of direct; one that also does the proxy's mandatory vault work (floor: GetItem + ` +
        `open + audit PutItem, then forward) ${pct(floor.ratio)}. The proxy did ${pct(proxy.of_floor)} of the floor.`,
    );
  if (proxy && transform)
    console.log(
      `proxy: at saturation p50(proxy+transform) − p50(proxy) = ${transform.p50} − ${proxy.p50} = ` +
        `${transform.p50 - proxy.p50} ms. Not a latency figure: with ${settings.connections} connections always busy, ` +
        `p50 ≈ connections ÷ req/s, so this follows the throughput lost to the transform's CPU.`,
    );
  const fixed = latency?.fixed_rate;
  if (fixed) {
    const what = `warm transform adds at p50 under load (${fixed.rate_rps} req/s)`;
    console.log(
      `proxy: ${what}, half of what proxy+transform sustains: p50 proxy ${fixed.proxy_p50_ms.join(", ")} ms, ` +
        `proxy+transform ${fixed.transform_p50_ms.join(", ")} ms; median difference ${fixed.transform_adds_p50_ms} ms${result(what)}`,
    );
  }
  if (!latency) return;
  const { sequential: seq } = latency;
  console.log(
    `proxy: one request at a time (${seq.proxy.n} each): direct ${describeStats(seq.direct)}; ` +
      `proxy ${describeStats(seq.proxy)}; proxy+transform ${describeStats(seq.transform)}`,
  );
  const seqWhat = "warm transform adds at p50, one request at a time";
  console.log(`proxy: ${seqWhat}: ${latency.sequential_transform_adds_p50_ms} ms${result(seqWhat)}`);
  console.log(
    `proxy: the transform alone, warm, through a ProcessSandbox in the bench process: ${describeStats(latency.sandbox_warm)}`,
  );
  const series = (name: string, s: NewCodeSeries, what?: string) =>
    console.log(
      `proxy: ${name} (${s.first.n} proxies${s.pause_ms ? `, ${s.pause_ms / 1000} s apart` : ", back to back"}): ` +
        `first request ${describeStats(s.first)}${what ? result(what) : ""}; second request ${describeStats(s.second)}` +
        (s.with_transform
          ? `; the service's sandbox processes before each first request (pool cap 16): ${s.sandbox_processes_before.join(" ")}`
          : ""),
    );
  series("new proxy without a transform (control)", latency.new_proxy_without_transform);
  series(
    "new proxy with new transform code",
    latency.new_code,
    "first run of new transform code, max, 1 s apart",
  );
  series(
    "new proxy with new transform code",
    latency.new_code_back_to_back,
    "first run of new transform code, max, back to back",
  );
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
  proxyLatency: ProxyLatency | undefined,
  checks: Check[],
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
    settings: {
      ...settings,
      target_ratios: TARGET_RATIO,
      transform_adds_target_ms: TRANSFORM_ADDS_TARGET_MS,
      new_code_target_ms: NEW_CODE_TARGET_MS,
    },
    ...(error ? { error } : {}),
    summary: summaries,
    ...(checks.length ? { checks } : {}),
    ...(proxyLatency ? { proxy_latency: proxyLatency } : {}),
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
      `${settings.rounds} rounds × ${settings.durationSeconds} s per target and scenario after ${settings.warmupSeconds} s of warm-up; ` +
      `scenarios: ${settings.scenarios.join(", ")}; cards: ${settings.cards}`,
  );
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const wantsProxy = settings.scenarios.includes("proxy");
  const wantsReact = settings.scenarios.includes("react");
  const wantsOutbound = settings.scenarios.includes("react-outbound");

  log("starting DynamoDB Local (in memory)…");
  const dynamo: DynamoDbLocal = await startDynamoDbLocal({});
  cleanups.push(() => dynamo.stop());
  dynamoPid = childPids("java")[0];
  checkInterrupted();

  const rootKey = `key_root_bench_${randomUUID()}`;
  const wantsFloor = floorScenarios.length > 0 || wantsProxy;
  // The destination first: the floor's proxies need its URL.
  let destination: RunningTarget | undefined;
  if (wantsProxy || wantsOutbound) {
    log("starting the proxy's destination (a child process)…");
    const started = await startTarget("destination", {}, join(dataDir, "destination.log"));
    cleanups.push(() => started.stop());
    runningTargets.push(started);
    destination = started;
  }
  const parts = ["the service", ...(wantsFloor ? ["the floor"] : [])];
  log(`starting ${parts.join(" and ")} (one child process each)…`);
  const started = await Promise.allSettled([
    startTarget(
      "service",
      {
        BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
        BENCH_DATA_DIR: join(dataDir, "service"),
        BENCH_ROOT_KEY: rootKey,
        // The rate limiter stays on, so its cost is measured, with a limit the load cannot reach.
        SVC_RATE_LIMIT_PER_SECOND: process.env.SVC_RATE_LIMIT_PER_SECOND ?? "1000000",
      },
      join(dataDir, "service.log"),
      settings.nodeArgs,
    ),
    wantsFloor
      ? startTarget(
          "floor",
          {
            BENCH_DYNAMODB_ENDPOINT: dynamo.endpoint,
            BENCH_DATA_DIR: join(dataDir, "floor"),
            ...(destination ? { BENCH_DESTINATION_URL: `${destination.url}${DESTINATION_PATH}` } : {}),
          },
          join(dataDir, "floor.log"),
          settings.nodeArgs,
        )
      : undefined,
  ]);
  for (const result of started)
    if (result.status === "fulfilled" && result.value) {
      const target = result.value;
      cleanups.push(() => target.stop());
      runningTargets.push(target);
    }
  const failedStart = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failedStart) throw failedStart.reason;
  const [service, floor] = started.map((r) => (r.status === "fulfilled" ? r.value : undefined)) as [
    RunningTarget,
    RunningTarget | undefined,
  ];
  log(runningTargets.map((t) => `${t.name} at ${t.url} (pid ${t.pid})`).join(", "));
  checkInterrupted();

  log("creating a tenant, a public application (token:create) and a private one (token:read)…");
  const keys = await serviceKeys(service.url, rootKey);
  const targets: Target[] = [];
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
    log("creating a card token, a proxy and a proxy with a request transform, to the destination…");
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

  const records: RunRecord[] = [];
  let proxyLatency: ProxyLatency | undefined;
  let outboundLatency: ReactOutboundLatency | undefined;
  let failure: string | undefined;
  try {
    for (const scenario of settings.scenarios) {
      if (scenario === "tokenize" || scenario === "read")
        await runScenario(
          scenario,
          targets.map((t) => floorServiceTarget(scenario, t)),
          records,
        );
      else if (scenario === "proxy" && destination && floor && proxySetup) {
        const proxyLoadTargets = proxyTargets(service, floor, destination, proxySetup);
        await runScenario(scenario, proxyLoadTargets, records);
        checkInterrupted();
        const fixedRate = await fixedRateLatency(proxyLoadTargets, records);
        try {
          proxyLatency = await measureProxyLatency(proxySetup, service.url, keys.management, {
            samples: settings.latencySamples,
            newProxies: settings.newProxies,
            log,
            check: checkInterrupted,
            sandboxProcesses: () => descendantPids(service.pid).length,
          });
          proxyLatency.fixed_rate = fixedRate;
        } catch (error) {
          if (interrupted) throw error;
          throw new RequestFailures(
            `proxy's unloaded measurements: ${error instanceof Error ? error.message : error}`,
          );
        }
      } else if (scenario === "react" && reactPath && use)
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
    }
  } catch (error) {
    if (!(error instanceof RequestFailures) && !interrupted) throw error;
    failure = interrupted
      ? "interrupted"
      : `requests failed in the ${error instanceof Error ? error.message : ""}`;
  }

  const summaries = summarize(records);
  const checks = proxyChecks(proxyLatency);
  if (outboundLatency)
    checks.push({
      scenario: "react-outbound",
      what: "one outbound fetch adds over a plain fetch at p50, warm, one request at a time",
      value_ms: outboundLatency.outbound_adds_p50_ms,
      target_ms: REACT_OUTBOUND_TARGET_MS,
      pass: outboundLatency.outbound_adds_p50_ms <= REACT_OUTBOUND_TARGET_MS,
    });
  const floorSummaries = summaries.filter((s) => s.scenario === "tokenize" || s.scenario === "read");
  const proxySummaries = summaries.filter((s) => s.scenario === "proxy");
  const reactSummaries = summaries.filter((s) => s.scenario === "react");
  console.log("");
  if (floorSummaries.length > 0) console.log(`${table(floorSummaries)}\n`);
  for (const s of floorSummaries.filter((x) => x.cpu_ratio !== undefined))
    console.log(
      `${s.scenario}: CPU per request (service, DynamoDB Local and autocannon together) is ` +
        `${((1 / (s.cpu_ratio as number)) * 100).toFixed(0)} % of the floor's, ` +
        `i.e. a CPU-bound ratio of ${((s.cpu_ratio as number) * 100).toFixed(0)} % (cross-check of the measured ${((s.ratio as number) * 100).toFixed(0)} %).`,
    );
  if (proxySummaries.length > 0 || proxyLatency) {
    if (floorSummaries.length > 0) console.log("");
    if (proxySummaries.length > 0) console.log(`${proxyTable(proxySummaries)}\n`);
    printProxyLatency(proxySummaries, proxyLatency, checks);
  }
  if (reactSummaries.length > 0) console.log(`\n${reactTable(reactSummaries)}`);
  if (outboundLatency)
    console.log(
      `\n${describeReactOutbound(outboundLatency)} ${verdict(outboundLatency.outbound_adds_p50_ms <= REACT_OUTBOUND_TARGET_MS)}`,
    );
  // Measured last, alone: it starts Node processes of its own and needs no target.
  if (settings.scenarios.includes("runner-cold-start") && !failure)
    console.log(
      `\n${describeRunnerColdStart(await measureRunnerColdStart(intEnv("BENCH_COLD_STARTS", 7, 1, 50), log))}`,
    );
  const noise = noiseNote(summaries);
  if (noise) console.log(`\n${noise}`);
  const file = writeResults(startedAt, m, records, summaries, proxyLatency, checks, failure);
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
