import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, Socket } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Persist under this directory; in memory when absent (tests). */
  dbPath?: string;
  port?: number;
  startTimeoutMs?: number;
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
  if (options.dbPath) mkdirSync(resolve(options.dbPath), { recursive: true });
  const args = ["-sharedDb", "-disableTelemetry", "-port", String(port), ...storage];
  // One argument per line in the property; a path holding a line break cannot be passed that way.
  if (args.some((arg) => /[\r\n]/.test(arg)))
    throw new Error("The DynamoDB Local data path must not contain line breaks.");
  const child = spawn(
    "java",
    [
      "-Xmx512m",
      `-Djava.library.path=${join(dir, "DynamoDBLocal_lib")}`,
      "-cp",
      join(dir, "DynamoDBLocal.jar"),
      "org.eclipse.jetty.xml.XmlConfiguration",
      `ddb.args=${args.join("\n")}`,
      LOOPBACK_CONFIGURATION,
    ],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  // Never leave a Java process behind when this process exits, however it exits (short of SIGKILL).
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);

  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  while (!(await canConnect(port))) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited during start-up:\n${output}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`DynamoDB Local did not open port ${port} in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      process.off("exit", killOnExit);
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}
