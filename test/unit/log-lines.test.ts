import { Console } from "node:console";
import { afterEach, describe, expect, it, vi } from "vitest";
import { gatherPerTurn } from "#shared/observability/log-lines.ts";

/** Records what reaches stdout's own write until restored (installed before gathering starts). */
function recordStdout() {
  const writes: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk, ...rest) => {
    writes.push(String(chunk));
    const callback = rest.find((arg) => typeof arg === "function");
    if (callback) (callback as () => void)();
    return true;
  });
  return { writes, restore: () => spy.mockRestore() };
}

const turnEnds = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("stdout gathered per turn (the local host)", () => {
  let stop: (() => void) | undefined;
  let stdout: ReturnType<typeof recordStdout> | undefined;
  const stopGathering = () => {
    stop?.();
    stop = undefined;
  };
  afterEach(() => {
    stopGathering();
    stdout?.restore();
  });

  it("leaves in one write at the end of the turn, in the order written, from any writer", async () => {
    stdout = recordStdout();
    stop = gatherPerTurn();
    process.stdout.write('{"message":"request"}\n');
    // As the logger writes: a Console over process.stdout (vitest replaces the global console).
    new Console({ stdout: process.stdout }).log("a console line");
    process.stdout.write(Buffer.from("bytes\n"));
    expect(stdout.writes).toEqual([]);
    await turnEnds();
    expect(stdout.writes).toEqual(['{"message":"request"}\na console line\nbytes\n']);
  });

  it("calls a writer's callback once its text is written", async () => {
    stdout = recordStdout();
    stop = gatherPerTurn();
    const written = new Promise<void>((resolve) => process.stdout.write("x\n", () => resolve()));
    await written;
    expect(stdout.writes).toEqual(["x\n"]);
  });

  it("stopping writes what is left and gives stdout its own write back", async () => {
    stdout = recordStdout();
    stop = gatherPerTurn();
    process.stdout.write("c\n");
    stopGathering();
    expect(stdout.writes).toEqual(["c\n"]);
    process.stdout.write("d\n");
    expect(stdout.writes).toEqual(["c\n", "d\n"]);
  });

  it("stays gathered until the last of several hosts in one process stops", async () => {
    stdout = recordStdout();
    const first = gatherPerTurn();
    stop = gatherPerTurn();
    first();
    first();
    process.stdout.write("still gathered\n");
    expect(stdout.writes).toEqual([]);
    stopGathering();
    expect(stdout.writes).toEqual(["still gathered\n"]);
    process.stdout.write("direct\n");
    expect(stdout.writes).toEqual(["still gathered\n", "direct\n"]);
  });

  it("refuses what stdout refuses at once, to its writer, and keeps gathering", async () => {
    stdout = recordStdout();
    stop = gatherPerTurn();
    const write = process.stdout.write as (chunk: unknown) => boolean;
    // The recording stand-in accepts anything: what matters is that it was handed over now, not gathered.
    write.call(process.stdout, 42);
    expect(stdout.writes).toEqual(["42"]);
    process.stdout.write("after\n");
    await turnEnds();
    expect(stdout.writes).toEqual(["42", "after\n"]);
  });

  it("writes what is gathered when the process exits before the turn ends", () => {
    stdout = recordStdout();
    const before = new Set(process.listeners("exit"));
    stop = gatherPerTurn();
    process.stdout.write("last words\n");
    // Only the listener this added (the worker's own exit listeners must not run).
    const added = process.listeners("exit").filter((listener) => !before.has(listener));
    expect(added).toHaveLength(1);
    for (const listener of added) listener.call(process, 0);
    expect(stdout.writes).toEqual(["last words\n"]);
  });
});
