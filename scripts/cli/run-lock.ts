/**
 * One import of a file at a time: two runs sharing a state file both found the same batches unrecorded, both sent
 * them (the service replayed one for the other: no token twice) and both appended their mapping lines, so the
 * mapping named each line twice (stop 50's bulk review). The lock is a file beside the state file, made with
 * O_EXCL, naming the process that holds it; one left by a run that died (its process gone) is taken over.
 *
 * A takeover can still race (three runs started over one stale lock: one moves a live run's fresh lock aside while
 * a third makes its own, review s52-a), so holding is checked where it matters: a run confirms the lock still
 * names it (its pid, host and a nonce of its own) before each write of its state or mapping, and stops when it does
 * not; its release removes the lock only while it names the run.
 *
 * The file-system calls are node:fs's unless a caller passes others (LockFs): the race tests pass wrapped ones that
 * start another run at the moment a takeover acts, rather than mocking node:fs (which misses a module another test
 * file of the worker imported first).
 */
import { randomBytes } from "node:crypto";
import * as nodeFs from "node:fs";
import { hostname } from "node:os";
import { CliError, fromServer } from "./api.ts";
import { O_NOFOLLOW } from "./output-files.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL } = nodeFs.constants;

/** The node:fs functions the lock uses. */
export type LockFs = Pick<
  typeof nodeFs,
  "closeSync" | "fstatSync" | "linkSync" | "openSync" | "readSync" | "renameSync" | "unlinkSync" | "writeSync"
>;

/** node:fs's own: what production uses. */
export const nodeLockFs: LockFs = nodeFs;

/** Whether the lock's holder still runs: only knowable on this host; a lock of another host is taken as held. */
function holderRuns(text: string): boolean {
  const [pid, host] = text.split("\n");
  if (host !== hostname()) return true;
  const id = Number(pid);
  if (!Number.isInteger(id) || id <= 0) return false;
  try {
    process.kill(id, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The lock's text, read as its writes are made: never through a symbolic link (a path planted in a shared directory
 * pointing at /dev/zero would be read for ever), only a regular file, at most 256 bytes. Undefined when it is no
 * such file.
 */
function readLock(fs: LockFs, path: string): string | undefined {
  const fd = fs.openSync(path, O_RDONLY | O_NOFOLLOW);
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(256);
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
}

/** A lock held by this run. */
export interface RunLock {
  /** Throws a CliError unless the lock still names this run (another run took it over: this one must stop). */
  confirm(): void;
  /** Removes the lock if it still names this run. */
  release(): void;
}

function heldLock(fs: LockFs, path: string, text: string, what: string): RunLock {
  const names = () => {
    try {
      return readLock(fs, path) === text;
    } catch {
      return false;
    }
  };
  return {
    confirm() {
      if (!names())
        throw new CliError(
          `${path} no longer names this run: another ${what} took it over and goes on from the state file, so this run stops`,
        );
    },
    release() {
      if (!names()) return; // gone (removed by hand), or another run's now: not this run's to remove
      try {
        fs.unlinkSync(path);
      } catch {
        // Already gone: nothing to release.
      }
    },
  };
}

/** Takes the lock at `path` for this process (through `fs`: node:fs's unless a test races the calls). */
export function lockRun(path: string, what: string, fs: LockFs = nodeLockFs): RunLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      const text = `${process.pid}\n${hostname()}\n${randomBytes(9).toString("base64url")}\n`;
      fs.writeSync(fd, text);
      fs.closeSync(fd);
      return heldLock(fs, path, text, what);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let text: string | undefined;
    try {
      text = readLock(fs, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // released meanwhile: try again
      text = undefined;
    }
    if (text === undefined)
      throw new CliError(`${path} is not a lock file of this CLI: remove it, or name another --state`);
    if (holderRuns(text))
      throw new CliError(
        `another ${what} is running (${path} names process ${fromServer(text.split("\n")[0] ?? "")}): wait for it to finish, or remove ${path} if no such run is left`,
      );
    // Its run died: taken over. Moved aside first (one mover wins), then checked to be the lock judged dead: another
    // run taking it over too may have made its own in between, which an unlink of the path would have removed
    // (both runs then held it: review s51-a). Such a lock is put back, and judged again.
    const aside = `${path}.${process.pid}.${randomBytes(6).toString("hex")}`;
    try {
      fs.renameSync(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    let moved: string | undefined;
    try {
      moved = readLock(fs, aside);
    } catch {
      moved = undefined;
    }
    if (moved !== text)
      try {
        fs.linkSync(aside, path);
      } catch {
        // A lock was made at the path meanwhile: that one stands.
      }
    fs.unlinkSync(aside);
  }
  throw new CliError(`${path}: another ${what} keeps taking the lock; try again`);
}
