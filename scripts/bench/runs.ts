/** Load runs: what one hits, the CPU each party spends on it, and a scenario's warm-up and alternating rounds. */
import { cpus } from "node:os";
import { cpuSeconds, machineBusySeconds, ownCpuSeconds, treeCpuDelta, treeCpuSeconds } from "./cpu.ts";
import { type RunFigures, runLoad } from "./load.ts";
import { log, type Scenario, settings } from "./settings.ts";
import { checkInterrupted } from "./shutdown.ts";
import type { DynamoCalls } from "./target-process.ts";
import type { RunningTarget } from "./targets.ts";

/** What one load run hits, and whose CPU it counts. */
export interface LoadTarget {
  /** floor, service, proxy, proxy+transform… */
  label: string;
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
export interface CpuFigures {
  target_ms?: number;
  destination_ms?: number;
  dynamodb_local_ms?: number;
  load_generator_ms: number;
  /** Machine busy time not spent by the parties (other people's processes, the kernel), % of all cores. */
  others_pct?: number;
}

export interface RunRecord extends RunFigures {
  scenario: Scenario;
  target: string;
  round: number;
  cpu: CpuFigures;
  /** With BENCH_TRACE=1: DynamoDB calls of the target per request, and their mean duration. */
  dynamodb_calls?: Record<string, { per_request: number; mean_ms: number }>;
}

/** A POST of a fixed body with fixed headers, as autocannon runs them. */
export const postLoad =
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

let dynamoPid: number | undefined;

/** DynamoDB Local's process, whose CPU every run counts. */
export function countDynamoDbLocal(pid: number | undefined): void {
  dynamoPid = pid;
}

/** One load run with the CPU spent by each party (and the target's DynamoDB calls, traced). */
export async function measuredRun(target: LoadTarget, durationSeconds: number) {
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
  const delta = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : b - a);
  const perRequest = (s?: number) => (s === undefined ? undefined : Number(((s * 1000) / n).toFixed(2)));
  const spent = {
    target: treeCpuDelta(before.target, after.target),
    destination: delta(before.destination, after.destination),
    dynamo: delta(before.dynamo, after.dynamo),
    self: after.self - before.self,
  };
  const machine = delta(before.machine, after.machine);
  const ours = Object.values(spent).reduce<number | undefined>(
    (sum, v) => (sum === undefined ? undefined : sum + (v ?? 0)),
    0,
  );
  const wall = (after.at - before.at) / 1000;
  const cpu: CpuFigures = {
    target_ms: perRequest(spent.target),
    ...(target.destinationPid === undefined ? {} : { destination_ms: perRequest(spent.destination) }),
    dynamodb_local_ms: perRequest(spent.dynamo),
    load_generator_ms: perRequest(spent.self) as number,
    ...(machine === undefined || ours === undefined
      ? {}
      : { others_pct: Number(((Math.max(0, machine - ours) / wall / cpus().length) * 100).toFixed(1)) }),
  };
  const dynamodb_calls = calls && Object.keys(calls).length > 0 ? perRequestCalls(calls, n) : undefined;
  return { figures, cpu, dynamodb_calls };
}

const perRequestCalls = (calls: DynamoCalls, n: number) =>
  Object.fromEntries(
    Object.entries(calls).map(([name, c]) => [
      name,
      { per_request: Number((c.count / n).toFixed(2)), mean_ms: Number((c.ms / c.count).toFixed(1)) },
    ]),
  );

export const failures = (f: RunFigures) => f.non2xx + f.errors + f.timeouts;

function describe(f: RunFigures, cpu: CpuFigures, calls?: RunRecord["dynamodb_calls"]): string {
  const ms = (v?: number) => (v === undefined ? "?" : v.toFixed(2));
  const destination = cpu.destination_ms === undefined ? "" : `, destination ${ms(cpu.destination_ms)}`;
  const callText = calls
    ? `; DynamoDB calls/req: ${Object.entries(calls)
        .map(([name, c]) => `${name} ${c.per_request} × ${c.mean_ms} ms`)
        .join(", ")}`
    : "";
  const failed = failures(f) ? `; ${failures(f)} FAILED: ${JSON.stringify(f.statusCodes)}` : "";
  return (
    `${f.rps.toFixed(0).padStart(5)} req/s  p50 ${f.p50.toFixed(0).padStart(3)} ms, p99 ${f.p99.toFixed(0).padStart(4)} ms  ` +
    `(${f.requests} req; CPU ms/req: target ${ms(cpu.target_ms)}${destination}, DynamoDB Local ${ms(cpu.dynamodb_local_ms)}, ` +
    `autocannon ${ms(cpu.load_generator_ms)}; others ${cpu.others_pct ?? "?"} %)${failed}${callText}`
  );
}

/** Warms each target up, then runs them in alternating rounds (a noisy moment weighs on all alike). */
export async function runScenario(
  scenario: Scenario,
  targets: LoadTarget[],
  records: RunRecord[],
): Promise<void> {
  for (const target of targets) {
    if (settings.warmupSeconds === 0) break;
    checkInterrupted();
    const { figures, cpu } = await measuredRun(target, settings.warmupSeconds);
    log(`${scenario}: warm-up ${target.label}: ${describe(figures, cpu)}`);
    if (failures(figures) > 0) throw new RequestFailures(`${scenario} warm-up of ${target.label}`);
  }
  const width = Math.max(...targets.map((t) => t.label.length));
  for (let round = 1; round <= settings.rounds; round++)
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

export class RequestFailures extends Error {}
