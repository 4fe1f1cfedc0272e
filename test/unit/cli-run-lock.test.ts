/**
 * The import's run lock (review s51-a, 29 Nov 2026): 27573af took over a lock left by a dead run by reading it and
 * then unlinking the path. Two runs started together after a crash both read the stale lock; the slower one's
 * unlink removed the lock the faster one had just made, and both ran (the double mapping lines the lock was added
 * against).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

const hooks: { beforeTakeover?: (path: string) => void } = {};
/** Runs the hook once, before the first removal or move of a lock (where a takeover acts on what it read). */
function once(path: import("node:fs").PathLike) {
  const hook = hooks.beforeTakeover;
  if (hook) {
    hooks.beforeTakeover = undefined;
    hook(String(path));
  }
}
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  return {
    ...actual,
    default: actual,
    unlinkSync: (path: import("node:fs").PathLike) => {
      once(path);
      return actual.unlinkSync(path);
    },
    renameSync: (from: import("node:fs").PathLike, to: import("node:fs").PathLike) => {
      once(from);
      return actual.renameSync(from, to);
    },
  };
});

const dir = () => mkdtempSync(join(tmpdir(), "svc-review-s51a-"));

afterEach(() => {
  vi.unstubAllGlobals();
  hooks.beforeTakeover = undefined;
});

describe("review s51-a: import CLI", () => {
  it("lets only one of two runs taking over the same stale lock hold it", async () => {
    const { lockRun } = await import("../../scripts/cli/run-lock.ts");
    const { hostname } = await import("node:os");
    const lock = join(dir(), "cards.jsonl.import-state.lock");
    // Left by a run that was killed: a process id that does not run on this host.
    writeFileSync(lock, `999999999\n${hostname()}\n`);
    let second: (() => void) | Error | undefined;
    // Run A has read the stale lock and is about to remove it; run B (another process) does the same in between:
    // reads the stale lock, removes it and makes its own.
    hooks.beforeTakeover = (path) => {
      expect(path).toBe(lock);
      try {
        second = lockRun(lock, "import with the state file x");
      } catch (error) {
        second = error as Error;
      }
    };
    let first: (() => void) | Error;
    try {
      first = lockRun(lock, "import with the state file x");
    } catch (error) {
      first = error as Error;
    }
    expect(typeof second).toBe("function"); // B took the stale lock over
    const holders = [first, second].filter((outcome) => typeof outcome === "function");
    // Before: A's unlink removed B's fresh lock and A made its own: both runs held the lock.
    expect(holders, `lock now names: ${JSON.stringify(readFileSync(lock, "utf8"))}`).toHaveLength(1);
  });
});
