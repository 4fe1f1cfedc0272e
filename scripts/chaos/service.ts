import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { alive, commandLine, descendants } from "#test/support/process-tree.ts";

/**
 * `npm start` as an operator runs it, in its own process group (so a "power cut" can take the whole group at
 * once), restarted on the same port, data directory and master key after each fault.
 */
export interface ServiceUnderTest {
  readonly url: string;
  readonly rootKey: string;
  /** The npm process. */
  readonly npm: ChildProcess;
  /** npm, the API process (node scripts/start.ts), and Java by now. */
  pids(): { npm: number; api: number | undefined; java: number | undefined };
  /** Output lines so far (the supervisor's restarts, the drain). */
  output(): string;
  /** Resolves when npm has exited. */
  exited: Promise<void>;
}

export interface ServiceOptions {
  dataDir: string;
  configHome: string;
  port: number;
  /** Lines of the service's output worth showing (restarts, draining, errors). */
  log: (line: string) => void;
}

/** Plain lines worth showing (the JSON request logs are not: the load counts its own answers). */
const WORTH_SHOWING = /^[^{].*(DynamoDB Local|draining|Stopped|grace period|Error|refus)/;

export async function startService(options: ServiceOptions): Promise<ServiceUnderTest> {
  const npm = spawn("npm", ["start"], {
    env: {
      ...process.env,
      PORT: String(options.port),
      SVC_DATA_DIR: options.dataDir,
      XDG_CONFIG_HOME: options.configHome,
      SVC_DYNAMODB_ENDPOINT: "",
      SVC_ROOT_KEY: "",
      SVC_MASTER_KEY_FILE: "",
      // 16 writers and their retries are one tenant: the load is the point, not the rate limit.
      SVC_RATE_LIMIT_PER_SECOND: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  let pending = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (WORTH_SHOWING.test(line)) options.log(`  service: ${line.trim()}`);
  };
  npm.stdout?.on("data", collect);
  npm.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));
  const deadline = Date.now() + 120_000;
  while (!output.includes("ready at")) {
    if (npm.exitCode !== null || Date.now() > deadline)
      throw new Error(`the service did not start:\n${output.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const rootKey = readFileSync(join(options.dataDir, "root-key"), "utf8").trim();
  return {
    url: `http://127.0.0.1:${options.port}`,
    rootKey,
    npm,
    exited,
    output: () => output,
    pids: () => {
      const below = descendants(npm.pid as number);
      return {
        npm: npm.pid as number,
        api: below.find((pid) => commandLine(pid).includes("scripts/start.ts")),
        java: below.find((pid) => commandLine(pid).includes("DynamoDBLocal.jar")),
      };
    },
  };
}

/** Waits until none of `pids` is alive (at most `timeoutMs`); answers those still alive. */
export async function gone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!pids.some(alive)) return [];
    await new Promise((r) => setTimeout(r, 100));
  }
  return pids.filter(alive);
}
