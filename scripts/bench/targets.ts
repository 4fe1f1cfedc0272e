/** Parent side of the benchmark targets: each runs in its own Node process, so that it has its own event loop. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { DynamoCalls, TargetMessage, TargetName } from "./target-process.ts";

export interface RunningTarget {
  name: TargetName;
  url: string;
  pid: number;
  /** The last error and warning lines of the target's log (its stdout) and its stderr, to explain a failure. */
  problems(): string[];
  /** DynamoDB calls since the previous call of this (empty unless BENCH_TRACE=1). */
  calls(): Promise<DynamoCalls>;
  stop(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL("./target-process.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const START_TIMEOUT_MS = 60_000;

/**
 * The Node binary the targets run on: BENCH_NODE (Lambda's major, say: docs/performance.md), else this process's.
 */
export const targetNode = () => process.env.BENCH_NODE || process.execPath;

/**
 * Starts a target in a child process (`node [nodeArgs] --import tsx target-process.ts <name>`) and waits for its
 * URL. Its stdout (the service's access log) goes straight to `logFile`, without this process reading it.
 */
export async function startTarget(
  name: TargetName,
  env: Record<string, string>,
  logFile: string,
  nodeArgs: string[] = [],
): Promise<RunningTarget> {
  const log = openSync(logFile, "w");
  // As in production: Object.prototype.__proto__ throws in every host process.
  const child = spawn(targetNode(), ["--disable-proto=throw", ...nodeArgs, "--import", "tsx", ENTRY, name], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", log, "pipe", "ipc"],
  });
  closeSync(log);
  // Never leave a child behind when this process exits, however it exits (short of SIGKILL).
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms:\n${stderr}`));
    }, START_TIMEOUT_MS);
    child.once("message", (message: TargetMessage) => {
      clearTimeout(timer);
      if ("ready" in message) resolve(message.ready);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited during start-up (${signal ?? code}):\n${stderr}`));
    });
  });

  return {
    name,
    url,
    pid: child.pid ?? 0,
    problems: () => {
      const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
      const bad = log.split("\n").filter((line) => /"level":"(ERROR|WARN|CRITICAL)"/i.test(line));
      return [...bad.slice(-10), ...(stderr.trim() ? [`stderr: ${stderr.trim().slice(-1000)}`] : [])];
    },
    calls: async () => {
      child.send("calls");
      for (;;) {
        const [message] = (await once(child, "message")) as [TargetMessage];
        if ("calls" in message) return message.calls;
      }
    },
    stop: async () => {
      process.off("exit", killOnExit);
      if (exited()) return;
      const gone = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
