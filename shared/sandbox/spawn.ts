/** How sandbox processes are started: flags, options and clean-up (shared by the pool and the escape tests). */
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { fileURLToPath } from "node:url";

export const DEFAULT_CHILD_SCRIPT = fileURLToPath(new URL("./child.mjs", import.meta.url));

/** `--permission` became stable (and the experimental flag an alias) in Node 22.13 and 23.5. */
export function permissionFlag(version = process.versions.node): string {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const stable = major >= 24 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13);
  return stable ? "--permission" : "--experimental-permission";
}

/**
 * The command line of a sandbox process: everything the permission model would grant is left out, so the
 * process may read its own script and nothing else (and from Node 25 on, reach no network either).
 */
export function childArguments(childScript: string, memoryMb: number): string[] {
  if (childScript.includes(",")) throw new Error("the sandbox child script path must not contain a comma");
  return [
    permissionFlag(),
    `--allow-fs-read=${childScript}`,
    "--no-addons",
    "--disallow-code-generation-from-strings",
    "--frozen-intrinsics",
    "--disable-proto=delete",
    "--zero-fill-buffers",
    `--max-old-space-size=${memoryMb}`,
    "--no-warnings",
    childScript,
  ];
}

/** Nothing of the host's environment (AWS credentials, root key, table names) and no directory of its own. */
export function childSpawnOptions(): SpawnOptions {
  return { env: {}, cwd: "/", stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "json" };
}

/** Every sandbox process alive in this host. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
/** Kills every sandbox process when the host exits (they also exit on their own when IPC disconnects). */
export function track(child: ChildProcess): void {
  live.add(child);
  child.once("exit", () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}
