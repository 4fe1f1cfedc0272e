/** How sandbox processes are started: flags, options and clean-up (shared by the pool and the escape tests). */
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const DEFAULT_CHILD_SCRIPT = fileURLToPath(new URL("./child.mjs", import.meta.url));

/**
 * The sandbox process's files, all beside one another: the entry (child.mjs) and the modules it imports. A Lambda
 * package ships them next to the runner bundle (lib/constructs/sandbox-runners.ts), and the process may read
 * exactly these (childArguments).
 */
export const CHILD_FILES = [
  "child.mjs",
  "child-lockdown.mjs",
  "child-runtime.mjs",
  "child-driver.mjs",
] as const;

/** The files of the sandbox process whose entry is `childScript`. */
export const childFiles = (childScript: string): string[] => [
  childScript,
  ...CHILD_FILES.slice(1).map((file) => join(dirname(childScript), file)),
];

/** `--permission` became stable (and the experimental flag an alias) in Node 22.13 and 23.5. */
export function permissionFlag(version = process.versions.node): string {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const stable = major >= 24 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13);
  return stable ? "--permission" : "--experimental-permission";
}

/**
 * The files of `sandbox-packages/` next to a child script (the errors module, and the built packages under
 * `built/`): the packages tenant code may require, all public code. Listed once per script.
 */
const packageFilesByScript = new Map<string, string[]>();
export function sandboxPackageFiles(childScript: string): string[] {
  let files = packageFilesByScript.get(childScript);
  if (files === undefined) {
    const dir = join(dirname(childScript), "sandbox-packages");
    const list = (path: string): string[] => {
      try {
        return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
          entry.isDirectory() ? list(join(path, entry.name)) : [join(path, entry.name)],
        );
      } catch {
        return [];
      }
    };
    files = list(dir);
    packageFilesByScript.set(childScript, files);
  }
  return files;
}

/**
 * The command line of a sandbox process: everything the permission model would grant is left out, so the
 * process may read its own scripts and the package files next to them, and nothing else (and from Node 25 on,
 * reach no network either).
 */
export function childArguments(childScript: string, memoryMb: number): string[] {
  const readable = [...childFiles(childScript), ...sandboxPackageFiles(childScript)];
  if (readable.some((path) => path.includes(",")))
    throw new Error("the sandbox child script and package paths must not contain a comma");
  return [
    permissionFlag(),
    ...readable.map((path) => `--allow-fs-read=${path}`),
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
