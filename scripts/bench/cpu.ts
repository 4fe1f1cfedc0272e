/**
 * CPU time of the processes sharing the machine during a run (Linux /proc; elsewhere nothing is reported):
 * with 2 cores for load generator, target and DynamoDB Local, CPU per request tells where the time goes.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every mainstream Linux

/** User + system CPU seconds of a process so far, or undefined when /proc does not tell. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which is in parentheses and may hold spaces): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime + stime) ? (utime + stime) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** Direct children of this process whose command is `name` (DynamoDB Local is a `java` child). */
export function childPids(name: string): number[] {
  try {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
          const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
          const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
          return comm === name && ppid === process.pid;
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds of this process (the load generator). */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/** Busy CPU seconds of the whole machine so far, all cores summed (other people's work included). */
export function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [, ...values] = line.trim().split(/\s+/);
    const ticks = values.map(Number);
    // user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return Number.isFinite(total) ? (total - idle) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** Parent pid of every process, from /proc (empty elsewhere). */
function parentPids(): Map<number, number> {
  const parents = new Map<number, number>();
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return parents;
}

/** The pids of a process's descendants (the service's sandbox processes), from /proc. */
export function descendantPids(pid: number): number[] {
  const parents = parentPids();
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents)
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
  }
  tree.delete(pid);
  return [...tree];
}

/**
 * CPU seconds so far of a process and of each of its descendants, by pid. A process's own counters exclude
 * its children's until it waits for them, hence the walk.
 */
export function treeCpuSeconds(pid: number): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const member of [pid, ...descendantPids(pid)]) {
    const value = cpuSeconds(member);
    if (value !== undefined) seconds.set(member, value);
  }
  return seconds;
}

/**
 * CPU seconds a process tree spent between two samples, in all and in the descendants alone: per pid,
 * after − before; a process born in between counts whole; one that exited in between is lost (a short-lived
 * sandbox process, at worst). Undefined when the root process was not readable.
 */
export function treeCpuDelta(
  rootPid: number,
  before: Map<number, number>,
  after: Map<number, number>,
): { total: number; descendants: number } | undefined {
  if (!before.has(rootPid) || !after.has(rootPid)) return undefined;
  let total = 0;
  let descendants = 0;
  for (const [pid, seconds] of after) {
    const spent = seconds - (before.get(pid) ?? 0);
    total += spent;
    if (pid !== rootPid) descendants += spent;
  }
  return { total, descendants };
}
