/** Parent side of the benchmark targets: each runs in its own Node process, so that it has its own event loop. */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { DynamoCalls, TargetMessage, TargetName } from "./target-process.ts";

export interface RunningTarget {
  name: TargetName;
  url: string;
  pid: number;
  /** The last error and warning lines of the target's log (its stdout), to explain a failure. */
  problems(count?: number): string[];
  /** DynamoDB calls since the previous call of this (empty unless BENCH_TRACE=1). */
  calls(): Promise<DynamoCalls>;
  stop(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL("./target-process.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once("exit", () => done());
  });
}

/**
 * Starts a target in a child process (`node [nodeArgs] --import tsx target-process.ts <name>`) and waits for its
 * URL. Its stdout (the service's access log) goes straight to `logFile`, without this process reading it.
 */
export async function startTarget(
  name: TargetName,
  env: Record<string, string>,
  logFile: string,
  nodeArgs: string[] = [],
  startTimeoutMs = 60_000,
): Promise<RunningTarget> {
  const log = openSync(logFile, "w");
  // As in production: Object.prototype.__proto__ throws in every host process.
  const child = spawn(
    process.execPath,
    ["--disable-proto=throw", ...nodeArgs, "--import", "tsx", ENTRY, name],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", log, "pipe", "ipc"],
    },
  );
  closeSync(log);
  // Never leave a child behind when this process exits, however it exits (short of SIGKILL).
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not start within ${startTimeoutMs} ms:\n${stderr}`));
    }, startTimeoutMs);
    child.on("message", (message: TargetMessage) => {
      clearTimeout(timer);
      if ("ready" in message) resolve(message.ready);
      else if ("failed" in message)
        reject(new Error(`${name} failed to start: ${message.failed}\n${stderr}`));
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
    problems: (count = 10) => {
      try {
        const lines = readFileSync(logFile, "utf8").split("\n");
        const bad = lines.filter((line) => /"level":"(ERROR|WARN|CRITICAL)"/i.test(line));
        return [...bad.slice(-count), ...(stderr.trim() ? [`stderr: ${stderr.trim().slice(-1000)}`] : [])];
      } catch {
        return [];
      }
    },
    calls: () =>
      new Promise((resolve) => {
        const onMessage = (message: TargetMessage) => {
          if (!("calls" in message)) return;
          child.off("message", onMessage);
          resolve(message.calls);
        };
        child.on("message", onMessage);
        child.send("calls");
      }),
    stop: async () => {
      process.off("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}
