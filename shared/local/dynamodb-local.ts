import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, Socket } from "node:net";
import { constants } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { privateDirectory } from "./private-directory.ts";

export interface DynamoDbLocal {
  endpoint: string;
  /** The running Java process's id (the chaos run kills it), undefined between a death and its restart. */
  readonly javaPid: number | undefined;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Persist under this directory; in memory when absent (tests). */
  dbPath?: string;
  port?: number;
  startTimeoutMs?: number;
  /**
   * Restart DynamoDB Local on the same port when it dies, at most `maxRestarts` times in a row (a run of a
   * minute resets the count), each after a doubling pause and with a log line. Absent: not restarted.
   */
  supervise?: { maxRestarts: number; log: (line: string) => void };
}

/** DynamoDB Local ships as a jar inside the npm package amplify-dynamodb-simulator. */
function emulatorDirectory(): string {
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve("amplify-dynamodb-simulator/package.json")), "emulator");
  if (!existsSync(join(dir, "DynamoDBLocal.jar")))
    throw new Error(`DynamoDB Local jar not found under ${dir}; run npm install.`);
  return dir;
}

export function assertJava(): void {
  const probe = spawnSync("java", ["-version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0)
    throw new Error(
      "Java 17 or newer is required to run DynamoDB Local, and `java` was not found on PATH. " +
        "Install a Java 17 runtime (for example `apt-get install openjdk-17-jre-headless`), " +
        "or point SVC_DYNAMODB_ENDPOINT at a DynamoDB you already run.",
    );
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
    socket.connect(port, "127.0.0.1");
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once("exit", () => done());
  });
}

/** Jetty XML that starts DynamoDB Local on 127.0.0.1 only (the file explains how). */
const LOOPBACK_CONFIGURATION = fileURLToPath(new URL("./dynamodb-local-loopback.xml", import.meta.url));

/**
 * The watchdog between this process and Java: Java runs in the background of a small shell, whose stdin is a
 * pipe from this process. `cat` returns when the pipe closes, that is when this process ends it (stop) or dies,
 * even by SIGKILL, so Java never outlives its parent; then TERM, and KILL after 5 s. The shell prints Java's pid
 * first, and exits with Java (ending its watcher, so no late KILL can reach a reused pid).
 */
const WATCHDOG = `
exec 3<&0
java "$@" </dev/null 3<&- &
pid=$!
echo "$pid"
( cat <&3 >/dev/null; kill -TERM "$pid" 2>/dev/null; sleep 5; kill -KILL "$pid" 2>/dev/null ) &
exec 3<&-
watcher=$!
wait "$pid"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
`;

interface Launched {
  child: ChildProcess;
  javaPid: number | undefined;
  output: () => string;
}

function launch(dir: string, args: string[]): Launched {
  const child = spawn(
    "sh",
    [
      "-c",
      WATCHDOG,
      "dynamodb-local",
      "-Xmx512m",
      `-Djava.library.path=${join(dir, "DynamoDBLocal_lib")}`,
      "-cp",
      join(dir, "DynamoDBLocal.jar"),
      "org.eclipse.jetty.xml.XmlConfiguration",
      `ddb.args=${args.join("\n")}`,
      LOOPBACK_CONFIGURATION,
    ],
    // Its own process group: a terminal's Ctrl-C reaches the service, which drains before stopping Java.
    { cwd: dir, stdio: ["pipe", "pipe", "pipe"], detached: true },
  );
  let output = "";
  const launched: Launched = { child, javaPid: undefined, output: () => output };
  child.stdout?.on("data", (chunk: Buffer) => {
    if (launched.javaPid === undefined) {
      const first = /^(\d+)\n/.exec(chunk.toString());
      if (first) launched.javaPid = Number(first[1]);
    }
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  // The pipe is the parent-death signal only: writes never happen, and its end must not crash this process.
  child.stdin?.on("error", () => undefined);
  return launched;
}

async function untilListening(launched: Launched, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await canConnect(port))) {
    if (launched.child.exitCode !== null || launched.child.signalCode !== null)
      throw new Error(`DynamoDB Local exited during start-up:\n${launched.output()}`);
    if (Date.now() > deadline) {
      kill(launched);
      throw new Error(`DynamoDB Local did not open port ${port} in time:\n${launched.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function kill(launched: Launched): void {
  if (launched.javaPid !== undefined)
    try {
      process.kill(launched.javaPid, "SIGKILL");
    } catch {
      // Already gone.
    }
  launched.child.kill("SIGKILL");
}

/** A run this long counts as healthy again: the restart count starts over. */
const HEALTHY_RUN_MS = 60_000;

/**
 * Starts DynamoDB Local with the machine's Java; `-disableTelemetry` always (it phones home otherwise).
 *
 * It listens on 127.0.0.1 only. DynamoDB Local checks no credentials and has no bind-address option (its
 * Jetty listens on every interface), so it is not started through its own main class but through Jetty's
 * XmlConfiguration (shipped in DynamoDBLocal_lib), which runs the same start-up with the connector's host set
 * to 127.0.0.1 (dynamodb-local-loopback.xml). Nothing on another machine can reach the tables.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  assertJava();
  const dir = emulatorDirectory();
  const port = options.port ?? (await freePort());
  const storage = options.dbPath ? ["-dbPath", resolve(options.dbPath)] : ["-inMemory"];
  if (options.dbPath) privateDirectory(resolve(options.dbPath));
  const args = ["-sharedDb", "-disableTelemetry", "-port", String(port), ...storage];
  // One argument per line in the property; a path holding a line break cannot be passed that way.
  if (args.some((arg) => /[\r\n]/.test(arg)))
    throw new Error("The DynamoDB Local data path must not contain line breaks.");
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;

  let current = launch(dir, args);
  let stopping = false;
  // Never leave a Java process behind when this process exits normally (the watchdog covers the rest).
  const killOnExit = () => kill(current);
  process.once("exit", killOnExit);
  await untilListening(current, port, startTimeoutMs);

  let restarts = 0;
  let startedAt = Date.now();
  const supervise = (launched: Launched) => {
    const supervisor = options.supervise;
    if (!supervisor) return;
    launched.child.once("exit", (code, signal) => {
      if (stopping) return;
      launched.child.stdin?.destroy();
      if (Date.now() - startedAt >= HEALTHY_RUN_MS) restarts = 0;
      // The watchdog shell exits with Java's status: 128 + n when Java died of signal n.
      const bySignal =
        code !== null && code > 128
          ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0]
          : undefined;
      const how = signal ? `signal ${signal}` : bySignal ? `signal ${bySignal}` : `code ${code}`;
      if (restarts >= supervisor.maxRestarts) {
        supervisor.log(
          `DynamoDB Local exited (${how}); ${restarts} restarts in a row already, not restarting again`,
        );
        return;
      }
      restarts += 1;
      const pauseMs = 500 * 2 ** (restarts - 1);
      supervisor.log(
        `DynamoDB Local exited (${how}); restarting on port ${port} in ${pauseMs} ms (restart ${restarts} of at most ${supervisor.maxRestarts})`,
      );
      setTimeout(() => {
        if (stopping) return;
        current = launch(dir, args);
        startedAt = Date.now();
        supervise(current);
        untilListening(current, port, startTimeoutMs).then(
          () => supervisor.log(`DynamoDB Local restarted on port ${port}`),
          (error: unknown) =>
            supervisor.log(
              `DynamoDB Local failed to restart: ${error instanceof Error ? error.message.split("\n")[0] : error}`,
            ),
        );
      }, pauseMs).unref();
    });
  };
  supervise(current);

  return {
    endpoint: `http://127.0.0.1:${port}`,
    get javaPid() {
      return current.child.exitCode === null && current.child.signalCode === null
        ? current.javaPid
        : undefined;
    },
    stop: async () => {
      stopping = true;
      process.off("exit", killOnExit);
      const { child } = current;
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Closing the pipe is the watchdog's signal: TERM to Java, KILL after 5 s; the shell exits with Java.
      child.stdin?.end();
      const timer = setTimeout(() => kill(current), 7000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}
