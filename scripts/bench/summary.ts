/** What the rounds of a target come to (medians), comparisons with another target, and the table printed. */
import { cpus } from "node:os";
import { median } from "./load.ts";
import type { CpuFigures, RunRecord } from "./runs.ts";
import type { Scenario } from "./settings.ts";

export interface Summary {
  scenario: Scenario;
  target: string;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Medians of the runs' CPU figures. */
  cpu: CpuFigures;
  compared_with?: string;
  /**
   * req/s over compared_with's: the median of the rounds' ratios, each round's req/s over the compared target's in
   * the same round (the runs next to each other in time, so a slow minute of the machine weighs on both sides).
   */
  ratio?: number;
  /** The ratio of the two targets' median req/s (what `ratio` was before 29 Nov 2026), for comparison. */
  ratio_of_medians?: number;
  /**
   * The compared target's CPU per request (all parties) over this one's: the ratio of throughputs a CPU-bound
   * machine would give. It barely moves when other processes take CPU, unlike req/s; a cross-check only.
   */
  cpu_ratio?: number;
  target_ratio?: number;
  pass?: boolean;
}

/** Which target each is compared with, and the share of its req/s it must reach (none: information only). */
const COMPARISONS: { scenario: Scenario; target: string; base: string; min?: number }[] = [
  { scenario: "tokenize", target: "service", base: "floor", min: 0.9 },
  { scenario: "read", target: "service", base: "floor", min: 0.9 },
  { scenario: "proxy", target: "proxy", base: "floor", min: 0.8 },
  { scenario: "proxy", target: "proxy+transform", base: "floor" },
];

/** All parties' CPU per request (ms); NaN when not known. */
export const totalCpu = ({ cpu }: { cpu: CpuFigures }) =>
  cpu.target_ms === undefined || cpu.dynamodb_local_ms === undefined || cpu.load_generator_ms === undefined
    ? Number.NaN
    : cpu.target_ms + cpu.dynamodb_local_ms + cpu.load_generator_ms + (cpu.destination_ms ?? 0);

function summaryOf(runs: RunRecord[]): Summary {
  const cpu: CpuFigures = {};
  for (const party of Object.keys(runs[0]?.cpu ?? {}) as (keyof CpuFigures)[]) {
    const known = runs.map((r) => r.cpu[party]).filter((v) => v !== undefined);
    cpu[party] = Number(median(known).toFixed(2));
  }
  const { scenario, target } = runs[0] as RunRecord;
  return {
    scenario,
    target,
    rounds: runs.length,
    rps: Number(median(runs.map((r) => r.rps)).toFixed(1)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpu,
  };
}

/**
 * The median over rounds of `value(target's round) / value(base's round)`, pairing the runs of the same round
 * (rounds alternate the targets: each pair ran within seconds of each other); NaN without a pair.
 */
export function pairedRatio(
  target: readonly RunRecord[],
  base: readonly RunRecord[],
  value: (run: RunRecord) => number,
): number {
  const ratios: number[] = [];
  for (const run of target) {
    const paired = base.find((b) => b.round === run.round);
    if (paired && value(paired) > 0 && Number.isFinite(value(run))) ratios.push(value(run) / value(paired));
  }
  return median(ratios);
}

/** Each scenario's targets in the order they ran, compared as COMPARISONS says. */
export function summarize(records: RunRecord[]): Summary[] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of records)
    groups.set(`${r.scenario} ${r.target}`, [...(groups.get(`${r.scenario} ${r.target}`) ?? []), r]);
  const summaries = [...groups.values()].map(summaryOf);
  return summaries.map((s) => {
    const comparison = COMPARISONS.find((c) => c.scenario === s.scenario && c.target === s.target);
    const base = summaries.find((b) => b.scenario === s.scenario && b.target === comparison?.base);
    if (!comparison || !base) return s;
    const runsOf = (summary: Summary) =>
      records.filter((r) => r.scenario === summary.scenario && r.target === summary.target);
    const ratio = Number(pairedRatio(runsOf(s), runsOf(base), (run) => run.rps).toFixed(3));
    // CPU-bound: the base's CPU per request over this target's, round by round as well.
    const cpuRatio = pairedRatio(runsOf(base), runsOf(s), totalCpu);
    return {
      ...s,
      compared_with: base.target,
      ratio,
      ratio_of_medians: Number((s.rps / base.rps).toFixed(3)),
      ...(Number.isFinite(cpuRatio) ? { cpu_ratio: Number(cpuRatio.toFixed(3)) } : {}),
      ...(comparison.min !== undefined
        ? { target_ratio: comparison.min, pass: ratio >= comparison.min }
        : {}),
    };
  });
}

/** The summary of one target of a scenario, which has run. */
export function summaryFor(records: RunRecord[], scenario: Scenario, target: string): Summary {
  const [summary] = summarize(records.filter((r) => r.scenario === scenario && r.target === target));
  if (!summary) throw new Error(`${scenario}: ${target} has no runs`);
  return summary;
}

const ms2 = (v?: number) => (v === undefined ? "?" : v.toFixed(2));
const pct = (ratio?: number) => (ratio === undefined ? "" : `${(ratio * 100).toFixed(0)} %`);
export const verdict = (pass?: boolean) => (pass === undefined ? "" : pass ? "PASS" : "FAIL");

/** The table's columns: medians, CPU per request, and each comparison with its CPU-bound cross-check. */
const COLUMNS: [string, (s: Summary) => string][] = [
  ["scenario", (s) => s.scenario],
  ["target", (s) => s.target],
  ["req/s", (s) => s.rps.toFixed(0)],
  ["p50 ms", (s) => s.p50.toFixed(0)],
  ["p99 ms", (s) => s.p99.toFixed(0)],
  [
    "CPU ms/req target + DDB Local",
    ({ cpu }) =>
      `${ms2(cpu.target_ms)} + ${ms2(cpu.dynamodb_local_ms)}${cpu.destination_ms === undefined ? "" : ` (destination ${ms2(cpu.destination_ms)})`}`,
  ],
  ["of", (s) => s.compared_with ?? ""],
  ["share", (s) => pct(s.ratio)],
  ["of medians", (s) => pct(s.ratio_of_medians)],
  ["CPU-bound", (s) => pct(s.cpu_ratio)],
  ["target", (s) => (s.target_ratio === undefined ? "" : `≥ ${pct(s.target_ratio)}`)],
  ["result", (s) => verdict(s.pass)],
];

/** One table for every load scenario. */
export function summaryTable(summaries: Summary[]): string {
  const rows = [COLUMNS.map(([name]) => name), ...summaries.map((s) => COLUMNS.map(([, cell]) => cell(s)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  const [header, ...body] = rows.map(line);
  return [header, `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body].join("\n");
}

/** A warning when other processes took a noticeable share of the machine during the measured runs. */
export function noiseNote(summaries: Summary[]): string | undefined {
  const noisy = summaries.filter((s) => (s.cpu.others_pct ?? 0) >= 5);
  if (noisy.length === 0) return undefined;
  const list = noisy.map((s) => `${s.scenario}/${s.target} ${s.cpu.others_pct} %`).join(", ");
  return `WARNING: other processes used a median share of the ${cpus().length} cores during the runs (${list}); req/s are skewed, ratios of alternating rounds less so.`;
}
