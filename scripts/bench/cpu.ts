/**
 * CPU time of the processes sharing the machine during a run (Linux /proc; elsewhere nothing is reported):
 * with 2 cores for load generator, target and DynamoDB Local, CPU per request tells where the time goes.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every mainstream Linux

/** Every process's CPU seconds so far and its parent, by pid: one pass over /proc. */
export type CpuSnapshot = Map<number, { parent: number; seconds: number }>;

export function cpuSnapshot(): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
  } catch {
    return snapshot; // no /proc
  }
  for (const pid of entries)
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // The fields after the command name, which is in parentheses and may hold spaces.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const seconds = (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
      if (Number.isFinite(seconds)) snapshot.set(Number(pid), { parent: Number(f[1]), seconds });
    } catch {
      // exited meanwhile
    }
  return snapshot;
}

/**
 * CPU seconds `pid` spent between two snapshots, with its descendants' (the service's sandbox processes) unless
 * `alone`: a process's own counters exclude its children's until it waits for them. A descendant that exited in
 * between is lost, one that started counts from zero.
 */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot, pid?: number, alone = false) {
  if (pid === undefined || !after.has(pid)) return undefined;
  const tree = new Set([pid]);
  for (let grew = !alone; grew; ) {
    grew = false;
    for (const [child, { parent }] of after)
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
  }
  let total = 0;
  for (const member of tree) total += (after.get(member)?.seconds ?? 0) - (before.get(member)?.seconds ?? 0);
  return total;
}

/** Busy CPU seconds of the whole machine so far, all cores summed (other people's work included). */
export function machineBusySeconds(): number | undefined {
  try {
    const ticks = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    const busy = ticks.reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0);
    return Number.isFinite(busy) ? busy / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}
