/** Markdown tables of summaries, as the bench prints them, and the cells they share. */
import type { Summary } from "./summary.ts";

export function renderTable(header: string[], rows: string[][], right: Set<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export const ms2 = (v: number | undefined) => (v === undefined ? "?" : v.toFixed(2));
export const pct = (ratio: number | undefined) =>
  ratio === undefined ? "" : `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)} %`;
export const verdict = (pass: boolean | undefined) => (pass === undefined ? "" : pass ? "PASS" : "FAIL");

/** The first columns of every table, and their cells. */
export const LEAD_HEADER = ["scenario", "target", "req/s (median)", "p50 ms", "p99 ms"];
export const leadCells = (s: Summary) => [
  s.scenario,
  s.target,
  s.rps.toFixed(0),
  s.p50.toFixed(0),
  s.p99.toFixed(0),
];
export const targetCell = (s: Summary) =>
  s.target_ratio === undefined ? "" : `≥ ${(s.target_ratio * 100).toFixed(0)} %`;

export const serviceCpu = (s: Summary) =>
  `${ms2(s.target_cpu_ms_per_request)}${s.sandbox_cpu_ms_per_request ? ` (${ms2(s.sandbox_cpu_ms_per_request)})` : ""}`;
