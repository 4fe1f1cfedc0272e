/** Load runs: what one hits, the CPU each party spends on it, and a scenario's warm-up and alternating rounds. */
import { cpus } from "node:os";
import { cpuSeconds, machineBusySeconds, ownCpuSeconds, treeCpuDelta, treeCpuSeconds } from "./cpu.ts";
import { type RunFigures, runLoad } from "./load.ts";
import { log, type Scenario, settings } from "./settings.ts";
import { checkInterrupted } from "./shutdown.ts";
import type { RunningTarget } from "./targets.ts";

/** What a run measured: floor or service (tokenize, read, react), or one of the proxy scenario's targets. */
export type TargetLabel =
  | "floor"
  | "service"
  | "direct"
  | "pass-through"
  | "proxy"
  | "proxy+transform"
  | "direct, slow destination"
  | "pass-through, slow destination"
  | "floor, slow destination"
  | "proxy, slow destination";

/** What one load run hits, and whose CPU it counts. */
export interface LoadTarget {
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
export interface CpuFigures {
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

export interface RunRecord extends RunFigures {
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

/** A POST of a fixed body with fixed headers, as autocannon runs them. */
export const postLoad =
  (
    url: string,
    path: string,
    headers: Record<string, string>,
    body: string,
    connections = settings.connections,
  ) =>
  (durationSeconds: number, overallRate?: number) =>
    runLoad({
      url,
      connections,
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

/**
 * One load run with the CPU spent by target (with its sandbox processes), destination, DynamoDB Local and load
 * generator (and DynamoDB calls, traced).
 */
export async function measuredRun(target: LoadTarget, durationSeconds: number) {
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

export const failures = (f: RunFigures) => f.non2xx + f.errors + f.timeouts;

export function describe(f: RunFigures, cpu: CpuFigures, calls?: RunRecord["dynamodb_calls"]): string {
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

export async function runScenario(
  scenario: Scenario,
  targets: LoadTarget[],
  records: RunRecord[],
): Promise<void> {
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

export class RequestFailures extends Error {}
