import { createHash } from "node:crypto";
import { chmodSync, constants, copyFileSync, existsSync, mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";

/** Where the key lived before issue 17: inside the data directory, so a copy of one was a copy of both. */
export const LEGACY_MASTER_KEY_NAME = "master.key";

/**
 * The default local master key file: under the user's configuration directory, named after the data directory
 * (its name and a hash of its absolute path), so a backup or copy of the data directory never holds its key, and
 * two data directories on one machine never share one.
 */
export function defaultMasterKeyFile(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const absolute = resolve(dataDir);
  const configHome = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  const tag = createHash("sha256").update(absolute).digest("hex").slice(0, 16);
  const name =
    basename(absolute)
      .replace(/[^A-Za-z0-9_.-]/g, "_")
      .replace(/^\.+/, "") || "data";
  return join(configHome, "svc-vault", `${name}-${tag}.master.key`);
}

export function isInside(file: string, dir: string): boolean {
  const rel = relative(resolve(dir), resolve(file));
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
}

export interface MasterKeyLocation {
  file: string;
  /** A line for the operator (the key was moved, or sits where a copy of the data takes it along), if any. */
  notice?: string;
}

/**
 * Where this data directory's master key lives: SVC_MASTER_KEY_FILE when set, else the default. A key still in
 * `<data dir>/master.key` (before issue 17) is moved to the default file on the first start that uses it, never
 * overwriting one already there; two different keys in both places refuse to start (the key check value cannot
 * say which is right without opening the data, and guessing could seal new data under the wrong one).
 */
export function locateMasterKeyFile(dataDir: string, explicit: string | undefined): MasterKeyLocation {
  const legacy = join(resolve(dataDir), LEGACY_MASTER_KEY_NAME);
  if (explicit) {
    const file = resolve(explicit);
    return isInside(file, dataDir)
      ? {
          file,
          notice: `Warning: the master key ${file} is inside the data directory; a copy of one is a copy of both.`,
        }
      : { file };
  }
  const file = defaultMasterKeyFile(dataDir);
  if (!existsSync(legacy)) return { file };
  if (existsSync(file)) {
    if (!readFileSync(file).equals(readFileSync(legacy)))
      throw new Error(
        `Two different master keys: ${file} and ${legacy}. Keep the one the data was sealed under, ` +
          "move the other away, and start again (or name the right one with SVC_MASTER_KEY_FILE).",
      );
    unlinkSync(legacy);
    return { file, notice: `Removed ${legacy}: the same master key is at ${file}.` };
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Copy, then remove: a rename fails across file systems, and the old file goes only once the new one exists.
  copyFileSync(legacy, file, constants.COPYFILE_EXCL);
  chmodSync(file, 0o600);
  unlinkSync(legacy);
  return {
    file,
    notice: `Moved the master key out of the data directory: ${legacy} → ${file}. Back it up apart from the data.`,
  };
}
