/** The results file (.bench/results.json) and what it records about the machine and the code measured. */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { targetNode } from "./targets.ts";

/** The targets' Node version (BENCH_NODE's when set). */
function targetsNodeVersion(): string {
  if (targetNode() === process.execPath) return process.version;
  return spawnSync(targetNode(), ["--version"], { encoding: "utf8" }).stdout?.trim() || "unknown";
}

export function machine() {
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? "unknown",
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    targets_node: targetsNodeVersion(),
    /** Other work on the machine skews the figures: the 1-minute load average when this was taken. */
    load_average_1m: Number(loadavg()[0]?.toFixed(2)),
  };
}

/** Writes .bench/results.json: when and where it ran, which commit, then `sections` (settings, summaries, runs…). */
export function writeResults(
  startedAt: Date,
  machineAtStart: ReturnType<typeof machine>,
  sections: object,
): string {
  const git = (...args: string[]) => spawnSync("git", args, { encoding: "utf8" }).stdout?.trim() ?? "";
  const dir = resolve(".bench");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "results.json");
  const code = {
    commit: git("rev-parse", "HEAD") || "unknown",
    uncommitted_files: git("status", "--porcelain").split("\n").filter(Boolean).length,
  };
  const results = {
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    code,
    machine_at_start: machineAtStart,
    machine_at_end: machine(),
    ...sections,
  };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}
