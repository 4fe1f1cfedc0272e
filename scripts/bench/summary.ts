/** What the rounds of a target come to (medians), comparisons with another target, and the table printed. */
import { cpus } from "node:os";
import { median } from "./load.ts";
import type { RunRecord } from "./runs.ts";
import type { Scenario } from "./settings.ts";

export interface Summary {
  scenario: Scenario;
  target: string;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Median CPU ms per request of each party. */
  cpu: { target?: number; destination?: number; dynamodb_local?: number; load_generator?: number };
  /**
   * The compared target's CPU per request (all parties) over this one's: the ratio of throughputs a CPU-bound
   * machine would give. It barely moves when other processes take CPU, unlike req/s; a cross-check only.
   */
  cpu_ratio?: number;
  /** Median share of the machine (% of all cores) used by other processes during the runs: noise. */
  others_pct?: number;
  compared_with?: string;
  /** req/s over compared_with's. */
  ratio?: number;
  target_ratio?: number;
  pass?: boolean;
}

/** Which target each is compared with, and the share of its req/s it must reach (none: information only). */
export const COMPARISONS: { scenario: Scenario; target: string; base: string; min?: number }[] = [
  { scenario: "tokenize", target: "service", base: "floor", min: 0.9 },
  { scenario: "read", target: "service", base: "floor", min: 0.9 },
  { scenario: "proxy", target: "proxy", base: "floor", min: 0.8 },
  { scenario: "proxy", target: "proxy+transform", base: "floor" },
];

const medianOf = (values: (number | undefined)[]) => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length ? Number(median(known).toFixed(2)) : undefined;
};

const totalCpu = ({ cpu }: Summary) =>
  cpu.target === undefined || cpu.dynamodb_local === undefined || cpu.load_generator === undefined
    ? undefined
    : cpu.target + cpu.dynamodb_local + cpu.load_generator + (cpu.destination ?? 0);

function summaryOf(scenario: Scenario, target: string, runs: RunRecord[]): Summary {
  return {
    scenario,
    target,
    rounds: runs.length,
    rps: Number(median(runs.map((r) => r.rps)).toFixed(1)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpu: {
      target: medianOf(runs.map((r) => r.cpu.target_ms)),
      destination: medianOf(runs.map((r) => r.cpu.destination_ms)),
      dynamodb_local: medianOf(runs.map((r) => r.cpu.dynamodb_local_ms)),
      load_generator: medianOf(runs.map((r) => r.cpu.load_generator_ms)),
    },
    others_pct: medianOf(runs.map((r) => r.cpu.others_pct)),
  };
}

/** Each scenario's targets in the order they ran, compared as COMPARISONS says. */
export function summarize(records: RunRecord[]): Summary[] {
  const keys = [...new Set(records.map((r) => `${r.scenario}\n${r.target}`))];
  const summaries = keys.map((key) => {
    const [scenario, target] = key.split("\n") as [Scenario, string];
    return summaryOf(
      scenario,
      target,
      records.filter((r) => r.scenario === scenario && r.target === target),
    );
  });
  return summaries.map((s) => {
    const comparison = COMPARISONS.find((c) => c.scenario === s.scenario && c.target === s.target);
    const base =
      comparison && summaries.find((b) => b.scenario === s.scenario && b.target === comparison.base);
    if (!comparison || !base) return s;
    const ratio = Number((s.rps / base.rps).toFixed(3));
    const [baseCpu, cpu] = [totalCpu(base), totalCpu(s)];
    return {
      ...s,
      compared_with: base.target,
      ratio,
      ...(baseCpu && cpu ? { cpu_ratio: Number((baseCpu / cpu).toFixed(3)) } : {}),
      ...(comparison.min !== undefined
        ? { target_ratio: comparison.min, pass: ratio >= comparison.min }
        : {}),
    };
  });
}

export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

const ms2 = (v?: number) => (v === undefined ? "?" : v.toFixed(2));
const pct = (ratio?: number) => (ratio === undefined ? "" : `${(ratio * 100).toFixed(0)} %`);
export const verdict = (pass?: boolean) => (pass === undefined ? "" : pass ? "PASS" : "FAIL");

/** One table for every load scenario: medians, CPU per request, and each comparison with its CPU-bound cross-check. */
export function summaryTable(summaries: Summary[]): string {
  const header = [
    "scenario",
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU ms/req target + DDB Local",
    "of",
    "share",
    "CPU-bound",
    "target",
    "result",
  ];
  const rows = summaries.map((s) => [
    s.scenario,
    s.target,
    s.rps.toFixed(0),
    s.p50.toFixed(0),
    s.p99.toFixed(0),
    `${ms2(s.cpu.target)} + ${ms2(s.cpu.dynamodb_local)}${s.cpu.destination === undefined ? "" : ` (destination ${ms2(s.cpu.destination)})`}`,
    s.compared_with ?? "",
    pct(s.ratio),
    pct(s.cpu_ratio),
    s.target_ratio === undefined ? "" : `≥ ${pct(s.target_ratio)}`,
    verdict(s.pass),
  ]);
  return renderTable(header, rows);
}

/** A warning when other processes took a noticeable share of the machine during the measured runs. */
export function noiseNote(summaries: Summary[]): string | undefined {
  const noisy = summaries.filter((s) => (s.others_pct ?? 0) >= 5);
  if (noisy.length === 0) return undefined;
  const list = noisy.map((s) => `${s.scenario}/${s.target} ${s.others_pct} %`).join(", ");
  return `WARNING: other processes used a median share of the ${cpus().length} cores during the runs (${list}); req/s are skewed, ratios of alternating rounds less so.`;
}
