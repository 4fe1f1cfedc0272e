/**
 * The CLI's output files (mapping, summary, state, export), opened so that a path planted in a shared directory
 * cannot redirect them: never through a symbolic link (O_NOFOLLOW), and only a regular file of this user with no
 * other name (a hard link). Every output file is readable by its owner only (0600), an existing one too: open()
 * applies the mode only to a file it creates, and an export written over a 0644 file was readable by everyone.
 */
import {
  closeSync,
  constants,
  createReadStream,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from "node:fs";
import { createInterface } from "node:readline";
import { CliError } from "./api.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_APPEND } = constants;
/** Absent where the platform has none (Windows): there, the owner check below is what is left. */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** A file descriptor for writing `path`: emptied ("truncate"), appended to, or kept as it is. */
export function openOutput(path: string, how: "truncate" | "append" | "keep"): number {
  // Emptied only once checked (below): O_TRUNC would empty a file that then turns out not to be ours to write.
  const flags = O_WRONLY | O_CREAT | O_NOFOLLOW | (how === "append" ? O_APPEND : 0);
  let fd: number;
  try {
    fd = openSync(path, flags, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP")
      throw new CliError(`${path} is a symbolic link: remove it, or name another output path`);
    throw error;
  }
  const stat = checkOwn(fd, path);
  if ((stat.mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
  if (how === "truncate") ftruncateSync(fd, 0);
  return fd;
}

/** The same rule for a file the CLI reads back (state, mapping): closes `fd` and throws when it is not ours. */
function checkOwn(fd: number, path: string) {
  const stat = fstatSync(fd);
  const problem =
    !stat.isFile() || (process.getuid !== undefined && stat.uid !== process.getuid())
      ? "is not a regular file of yours"
      : stat.nlink > 1
        ? "has another name (a hard link)"
        : undefined;
  if (problem) {
    closeSync(fd);
    throw new CliError(`${path} ${problem}: remove it, or name another output path`);
  }
  return stat;
}

/**
 * Opens a file this CLI wrote (the state file, the mapping) for reading, under the rule its writes follow: never
 * through a symbolic link, only a regular file of this user with no other name. A state file planted beside the
 * input would otherwise be trusted (batches it calls finished are skipped, its counts and failures reported)
 * although every write to it is refused. Undefined when the file does not exist.
 */
function openOwn(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP")
      throw new CliError(`${path} is a symbolic link: remove it, or name another output path`);
    throw error;
  }
  checkOwn(fd, path);
  return fd;
}

/** A file this CLI wrote, whole (`openOwn`'s rule); undefined when it does not exist. */
export function readOwnFile(path: string): string | undefined {
  const fd = openOwn(path);
  if (fd === undefined) return undefined;
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * A file this CLI wrote, line by line (`openOwn`'s rule), for one that grows with the input: the mapping of a
 * large import outgrows what one string may hold (about 512 MB in V8), and a resume read it whole.
 */
export async function* readOwnLines(path: string): AsyncGenerator<string> {
  const fd = openOwn(path);
  if (fd === undefined) return;
  const lines = createInterface({
    input: createReadStream("", { fd, encoding: "utf8" }),
    crlfDelay: Infinity,
  });
  try {
    yield* lines;
  } finally {
    lines.close();
  }
}

function withOutput(path: string, how: "truncate" | "append" | "keep", use: (fd: number) => void): void {
  const fd = openOutput(path, how);
  try {
    use(fd);
  } finally {
    closeSync(fd);
  }
}

export const writeOutput = (path: string, text: string) =>
  withOutput(path, "truncate", (fd) => writeSync(fd, text));
export const appendOutput = (path: string, text: string) =>
  withOutput(path, "append", (fd) => writeSync(fd, text));
export const truncateOutput = (path: string, bytes: number) =>
  withOutput(path, "keep", (fd) => ftruncateSync(fd, bytes));
