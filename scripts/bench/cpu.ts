/**
 * CPU time of the processes sharing the machine during a run (Linux /proc; elsewhere nothing is reported):
 * with 2 cores for load generator, target and DynamoDB Local, CPU per request tells where the time goes.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every mainstream Linux

/** Fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold spaces). */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds of a process so far, or undefined when /proc does not tell. */
export function cpuSeconds(pid: number): number | undefined {
  const fields = statFields(pid);
  const seconds = (Number(fields?.[11]) + Number(fields?.[12])) / TICKS_PER_SECOND;
  return Number.isFinite(seconds) ? seconds : undefined;
}

/**
 * CPU seconds so far of a process and of each of its descendants (the service's sandbox processes), by pid: a
 * process's own counters exclude its children's until it waits for them. Summing after − before per pid loses
 * at worst a short-lived sandbox process that exited in between.
 */
export function treeCpuSeconds(pid: number): Map<number, number> {
  const parents = new Map<number, number>();
  try {
    for (const entry of readdirSync("/proc"))
      if (/^\d+$/.test(entry)) parents.set(Number(entry), Number(statFields(entry)?.[1]));
  } catch {
    // no /proc
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents)
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
  }
  const seconds = new Map<number, number>();
  for (const member of tree) {
    const value = cpuSeconds(member);
    if (value !== undefined) seconds.set(member, value);
  }
  return seconds;
}

export function treeCpuDelta(before: Map<number, number>, after: Map<number, number>): number | undefined {
  if (after.size === 0) return undefined;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** CPU seconds of this process (the load generator). */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
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
