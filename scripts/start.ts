/**
 * `npm start`: DynamoDB Local + the API on http://127.0.0.1:$PORT (default 3000), data under $SVC_DATA_DIR.
 * Prints the base URL and, when it generated one, the root key.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startLocalService } from "#functions/local.ts";
import { ensureSandboxPackages } from "#lib/sandbox-packages.ts";
import { newApiKey } from "#shared/ids.ts";
import { privateDirectory } from "#shared/local/private-directory.ts";

/** Every host process runs with Object.prototype.__proto__ throwing (docs/security.md, process integrity). */
const HARDENING_FLAG = "--disable-proto=throw";

function protoDisabled(): boolean {
  try {
    Reflect.get({}, "__proto__");
    return false;
  } catch {
    return true;
  }
}

/**
 * Started without the flag (`node --import tsx scripts/start.ts`, `tsx scripts/start.ts`): run this script
 * again in a child that has it, pass signals on, and exit as the child does. The IPC channel tells the child
 * when this process is gone, even by SIGKILL (see watchParent).
 */
function relaunchHardened(): void {
  const child = spawn(process.execPath, [HARDENING_FLAG, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/**
 * No process of the tree outlives its parent: this one stops (draining) when the process that started it
 * (`npm start`, or the unhardened relaunch above) is gone, even killed by SIGKILL. With an IPC channel its
 * disconnect says so; otherwise the parent pid changing (re-parenting) does, checked every second.
 */
function watchParent(stop: (why: string) => void): void {
  if (process.channel) {
    process.once("disconnect", () => stop("parent process exited"));
    process.channel.unref();
    return;
  }
  const parent = process.ppid;
  if (parent <= 1) return;
  setInterval(() => {
    if (process.ppid !== parent) stop("parent process exited");
  }, 1000).unref();
}

const startedAt = Date.now();
const port = Number(process.env.PORT ?? 3000);
const dataDir = resolve(process.env.SVC_DATA_DIR ?? ".svc-data");

/** The root key: SVC_ROOT_KEY, else the one generated on an earlier start, else a new one (saved, mode 600). */
function rootKey(): { key: string; generated: boolean; file: string } {
  const file = join(dataDir, "root-key");
  if (process.env.SVC_ROOT_KEY) return { key: process.env.SVC_ROOT_KEY, generated: false, file };
  if (existsSync(file)) return { key: readFileSync(file, "utf8").trim(), generated: false, file };
  const key = newApiKey("root");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { key, generated: true, file };
}

async function main() {
  privateDirectory(dataDir);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, got ${process.env.PORT}`);
  const root = rootKey();
  // The packages tenant code may require (lib/sandbox-packages.ts), built when missing or stale.
  if (await ensureSandboxPackages()) console.log("Built the sandbox packages");
  const external = process.env.SVC_DYNAMODB_ENDPOINT || undefined;
  console.log(external ? `Using DynamoDB at ${external}` : "Starting DynamoDB Local…");
  const service = await startLocalService({
    port,
    rootKey: root.key,
    dataDir,
    dynamodbEndpoint: external,
    // `npm run dev` (scripts/dev.ts): DynamoDB Local keeps nothing on disk.
    inMemory: process.argv.includes("--in-memory"),
    testClock: process.env.SVC_TEST_CLOCK === "1" || process.env.SVC_TEST_CLOCK === "true",
    log: (line) => console.log(`${new Date().toISOString()} ${line}`),
  });
  console.log(`svc-vault is ready at ${service.url} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
  console.log(`Data directory: ${dataDir}`);
  for (const notice of service.notices) console.log(notice);
  console.log(`Master key: ${service.masterKeyFile} (back it up apart from the data directory)`);
  if (root.generated) console.log(`Root key (generated, saved to ${root.file}): ${root.key}`);
  else if (!process.env.SVC_ROOT_KEY) console.log(`Root key: read from ${root.file}`);
  console.log(`Object.prototype.__proto__ access throws (${HARDENING_FLAG})`);
  if (service.deps.testClock) console.log('Test clock enabled: POST /_test/clock {"advance_seconds": n}');

  // A signal drains: no new connections, requests in flight answered (up to SVC_SHUTDOWN_GRACE_SECONDS), then
  // the sandbox and DynamoDB Local stop. Later signals change nothing: a terminal's Ctrl-C reaches this process
  // both directly and forwarded by npm (or the relaunching parent), and the grace period bounds the wait anyway.
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${why}: draining (up to ${service.deps.config.shutdownGraceSeconds} s), then stopping…`);
    service.stop().then(
      ({ cut }) => {
        if (cut > 0) console.log(`${cut} requests were still running at the end of the grace period`);
        console.log("Stopped");
        process.exit(0);
      },
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  watchParent(stop);
}

if (!protoDisabled()) relaunchHardened();
else
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
