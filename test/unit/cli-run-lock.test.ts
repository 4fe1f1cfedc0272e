/**
 * The import's run lock (scripts/cli/run-lock.ts), raced by runs started together over a lock left by a dead run.
 * - Review s51-a: 27573af took such a lock over by reading it and then unlinking the path; the slower of two runs
 *   removed the lock the faster one had just made, and both ran (the double mapping lines the lock is against).
 * - Review s52-a: with three runs, one moved a live run's fresh lock aside while a third made its own; putting it
 *   back failed and it was removed, so two runs believed they held the lock.
 * A run holds the lock while the lock names it: it confirms that before each write of its state or mapping.
 */
import {
  linkSync,
  mkdtempSync,
  type PathLike,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type LockFs, lockRun, nodeLockFs, type RunLock } from "../../scripts/cli/run-lock.ts";

const hooks: { beforeTakeover?: (path: string) => void; beforeLink?: () => void } = {};
/** Runs the hook once, before the first removal or move of a lock (where a takeover acts on what it read). */
function once(path: PathLike) {
  const hook = hooks.beforeTakeover;
  if (hook) {
    hooks.beforeTakeover = undefined;
    hook(String(path));
  }
}
/**
 * node:fs with the hooks run before a removal, move or link: passed to lockRun, not mocked into node:fs (the unit
 * project's files share their worker's modules, so a mock misses a run-lock.ts another file imported first: s53).
 */
const racedFs: LockFs = {
  ...nodeLockFs,
  unlinkSync: (path: PathLike) => {
    once(path);
    return unlinkSync(path);
  },
  renameSync: (from: PathLike, to: PathLike) => {
    once(from);
    return renameSync(from, to);
  },
  linkSync: (from: PathLike, to: PathLike) => {
    const hook = hooks.beforeLink;
    hooks.beforeLink = undefined;
    hook?.();
    return linkSync(from, to);
  },
};

const staleLock = () => {
  const lock = join(mkdtempSync(join(tmpdir(), "svc-run-lock-")), "cards.jsonl.import-state.lock");
  writeFileSync(lock, `999999999\n${hostname()}\n`); // left by a run that was killed: no such process here
  return lock;
};

/** Takes the lock as the process `pid` would (the pid it writes and judges others by). */
function takeAs(pid: number, lock: string): RunLock | Error {
  const real = process.pid;
  const setPid = (value: number) =>
    Object.defineProperty(process, "pid", { value, configurable: true, writable: false, enumerable: true });
  setPid(pid);
  try {
    return lockRun(lock, "import with the state file x", racedFs);
  } catch (error) {
    return error as Error;
  } finally {
    setPid(real);
  }
}

/** The runs that hold the lock: took it, and it still names them. */
const holding = (runs: Record<string, RunLock | Error | undefined>) =>
  Object.entries(runs)
    .filter(([, run]) => {
      if (!run || run instanceof Error) return false;
      try {
        run.confirm();
        return true;
      } catch {
        return false;
      }
    })
    .map(([name]) => name);

afterEach(() => {
  hooks.beforeTakeover = undefined;
  hooks.beforeLink = undefined;
});

describe("import CLI: run lock", () => {
  it("lets one of two runs taking over the same stale lock hold it", () => {
    const lock = staleLock();
    let second: RunLock | Error | undefined;
    // Run A has read the stale lock and is about to move it; run B reads it, takes it over and makes its own.
    hooks.beforeTakeover = (path) => {
      expect(path).toBe(lock);
      second = takeAs(process.ppid, lock);
    };
    const first = takeAs(process.ppid + 1_000_000, lock);
    // Review s53: the race happened at all (a node:fs mock, used before, missed run-lock.ts when another file of the
    // worker imported it first, and both race tests passed with no race).
    expect(second, "the takeover hook never ran").toBeDefined();
    expect(second).not.toBeInstanceOf(Error); // B took the stale lock over
    expect(
      holding({ first, second }),
      `lock names ${JSON.stringify(readFileSync(lock, "utf8"))}`,
    ).toHaveLength(1);
  });

  it("lets one of three runs started over a stale lock hold it", () => {
    const lock = staleLock();
    let b: RunLock | Error | undefined;
    let c: RunLock | Error | undefined;
    // A has read the stale lock; before A moves it aside, B (a live process) takes it over whole. A then moves B's
    // fresh lock aside, sees it is not the one it judged dead and is about to put it back: C starts now and finds
    // the path free.
    hooks.beforeTakeover = () => {
      b = takeAs(process.ppid, lock);
      hooks.beforeLink = () => {
        c = takeAs(process.pid, lock);
      };
    };
    const a = takeAs(process.ppid + 1_000_000, lock);
    expect({ b: b !== undefined, c: c !== undefined }, "the race's hooks never ran").toEqual({
      b: true,
      c: true,
    });
    expect(holding({ a, b, c }), `lock names ${JSON.stringify(readFileSync(lock, "utf8"))}`).toHaveLength(1);
  });

  it("releases only its own lock", () => {
    const lock = staleLock();
    const first = takeAs(process.pid, lock);
    if (first instanceof Error) throw first;
    // Taken over meanwhile (its text replaced): the first run's release leaves the other run's lock alone.
    writeFileSync(lock, `${process.ppid}\n${hostname()}\nother\n`);
    expect(() => first.confirm()).toThrow(/no longer names this run/);
    first.release();
    expect(readFileSync(lock, "utf8")).toBe(`${process.ppid}\n${hostname()}\nother\n`);
  });
});
