/** Load runs: what one hits, the CPU each party spends on it, and a scenario's warm-up and alternating rounds. */
import { cpus } from "node:os";
import { cpuSnapshot, cpuSpent, machineBusySeconds } from "./cpu.ts";
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

/** What a scenario measured besides its load runs (for .bench/results.json), and its report. */
export interface Measured {
  figures: object;
  report: string;
}

/**
 * CPU per request (ms) of each party during a run, and `others_pct`: the machine's busy time not spent by the
 * parties (other people's processes, the kernel), in % of all cores.
 */
export type CpuFigures = Partial<
  Record<"target_ms" | "destination_ms" | "dynamodb_local_ms" | "load_generator_ms" | "others_pct", number>
>;

export interface RunRecord extends RunFigures {
  scenario: Scenario;
  target: string;
  round: number;
  cpu: CpuFigures;
  /** With BENCH_TRACE=1: DynamoDB calls of the target per request, and their mean duration. */
  dynamodb_calls?: Record<string, { per_request: number; mean_ms: number }>;
}

/** A POST of a fixed body with fixed headers, as autocannon (or paced.ts) runs them. */
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
      overallRate,
    });

let dynamoPid: number | undefined;

/** DynamoDB Local's process, whose CPU every run counts. */
export function countDynamoDbLocal(pid: number | undefined): void {
  dynamoPid = pid;
}

const round2 = (value: number) => Number(value.toFixed(2));

/** One load run with the CPU spent by each party (and the target's DynamoDB calls, traced). */
async function measuredRun(target: LoadTarget, durationSeconds: number) {
  if (settings.trace) await target.traced?.calls();
  const [before, busyBefore, startedAt] = [cpuSnapshot(), machineBusySeconds(), performance.now()];
  const figures = await target.load(durationSeconds);
  const [after, busyAfter, endedAt] = [cpuSnapshot(), machineBusySeconds(), performance.now()];
  const calls = settings.trace ? await target.traced?.calls() : undefined;
  const spent = {
    target_ms: cpuSpent(before, after, target.pid),
    destination_ms: cpuSpent(before, after, target.destinationPid),
    dynamodb_local_ms: cpuSpent(before, after, dynamoPid),
    load_generator_ms: cpuSpent(before, after, process.pid, true),
  };
  const n = Math.max(1, figures.requests);
  const cpu: CpuFigures = {};
  for (const [party, seconds] of Object.entries(spent))
    if (seconds !== undefined) cpu[party as keyof typeof spent] = round2((seconds * 1000) / n);
  if (busyBefore !== undefined && busyAfter !== undefined) {
    const ours = Object.values(spent).reduce<number>((sum, seconds) => sum + (seconds ?? 0), 0);
    const share = Math.max(0, busyAfter - busyBefore - ours) / ((endedAt - startedAt) / 1000) / cpus().length;
    cpu.others_pct = Number((share * 100).toFixed(1));
  }
  const dynamodb_calls = calls && Object.keys(calls).length > 0 ? perRequestCalls(calls, n) : undefined;
  return { figures, cpu, dynamodb_calls };
}

const perRequestCalls = (calls: DynamoCalls, n: number) =>
  Object.fromEntries(
    Object.entries(calls).map(([name, c]) => [
      name,
      { per_request: round2(c.count / n), mean_ms: Number((c.ms / c.count).toFixed(1)) },
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

export class RequestFailures extends Error {}

/**
 * Warms each target up (`warmupSeconds`, BENCH_WARMUP_S unless said), then runs them in alternating rounds (a
 * noisy moment weighs on all alike); a failed request ends the scenario.
 */
export async function runScenario(
  scenario: Scenario,
  targets: LoadTarget[],
  records: RunRecord[],
  warmupSeconds = settings.warmupSeconds,
): Promise<void> {
  const width = Math.max(...targets.map((t) => t.label.length));
  /** Round 0 is the warm-up, not recorded. */
  const run = async (target: LoadTarget, round: number, seconds: number) => {
    checkInterrupted();
    const { figures, cpu, dynamodb_calls } = await measuredRun(target, seconds);
    const which = round === 0 ? "warm-up" : `round ${round}/${settings.rounds}`;
    log(`${scenario}: ${which} ${target.label.padEnd(width)} ${describe(figures, cpu, dynamodb_calls)}`);
    if (round > 0) records.push({ scenario, target: target.label, round, ...figures, cpu, dynamodb_calls });
    if (failures(figures) > 0) throw new RequestFailures(`${scenario} ${which} of ${target.label}`);
  };
  if (warmupSeconds > 0) for (const target of targets) await run(target, 0, warmupSeconds);
  for (let round = 1; round <= settings.rounds; round++)
    for (const target of targets) await run(target, round, settings.durationSeconds);
}
