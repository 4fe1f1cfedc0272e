/** What the rounds of a target come to: medians of throughput, latency and CPU, and comparisons with another target. */
import { cpus } from "node:os";
import { median } from "./load.ts";
import type { RunRecord, TargetLabel } from "./runs.ts";
import type { Scenario } from "./settings.ts";

export interface Summary {
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
  /** The target this one is compared with (floor for tokenize and read; see scenarios/proxy.ts for proxy). */
  compared_with?: TargetLabel;
  /** req/s over compared_with's. */
  ratio?: number;
  target_ratio?: number;
  pass?: boolean;
}

/** A latency target of the proxy scenario, with its measured value. */
export interface Check {
  scenario: Scenario;
  what: string;
  value_ms: number;
  target_ms: number;
  pass: boolean;
}

export const medianOf = (values: (number | undefined)[]) => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length ? Number(median(known).toFixed(2)) : undefined;
};

/** CPU per request of all parties: target, DynamoDB Local, autocannon, and the destination when separate. */
export function totalCpu(s: Summary): number | undefined {
  const parts = [
    s.target_cpu_ms_per_request,
    s.dynamodb_local_cpu_ms_per_request,
    s.load_generator_cpu_ms_per_request,
  ];
  return parts.every((p) => p !== undefined)
    ? (parts as number[]).reduce((a, b) => a + b, 0) + (s.destination_cpu_ms_per_request ?? 0)
    : undefined;
}

/** The rounds of one target: medians of req/s, latency and each party's CPU per request. */
export function summaryOf(scenario: Scenario, target: TargetLabel, runs: RunRecord[]): Summary {
  return {
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
  };
}

/** The runs of one scenario's target. */
export const runsOf = (records: RunRecord[], scenario: Scenario, target: TargetLabel) =>
  records.filter((r) => r.scenario === scenario && r.target === target);

/** `against` compared with `base`: req/s ratio, CPU-bound ratio and, when given, the target ratio and verdict. */
export function compared(against: Summary, base: Summary, target?: number): Summary {
  const ratio = Number((against.rps / base.rps).toFixed(3));
  const baseCpu = totalCpu(base);
  const cpu = totalCpu(against);
  return {
    ...against,
    compared_with: base.target,
    ratio,
    ...(baseCpu && cpu ? { cpu_ratio: Number((baseCpu / cpu).toFixed(3)) } : {}),
    ...(target !== undefined ? { target_ratio: target, pass: ratio >= target } : {}),
  };
}

/** A warning when other processes took a noticeable share of the machine during the measured runs. */
export function noiseNote(summaries: Summary[]): string | undefined {
  const noisy = summaries.filter((s) => (s.others_pct ?? 0) >= 5);
  if (noisy.length === 0) return undefined;
  const list = noisy.map((s) => `${s.scenario}/${s.target} ${s.others_pct} %`).join(", ");
  return `WARNING: other processes used a median share of the ${cpus().length} cores during the runs (${list}); the figures are skewed.`;
}
