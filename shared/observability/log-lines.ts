/**
 * The local host's stdout, written once per turn of the event loop.
 *
 * Every line the service logs (its access lines, the logger's lines) goes to stdout, which Node writes
 * synchronously to a file or a pipe: one write(2) per line. A Lambda serves one invocation at a time and a line
 * must not wait past its answer (the environment may freeze), so there every line is written at once. The local
 * host serves many requests at once from one process, where a write per request was one of the largest costs the
 * framework added to a read (docs/performance.md). There, `gatherPerTurn` gathers what one turn of the event loop
 * writes to stdout, from any writer, and writes it in one piece at the end of the turn (setImmediate): the same
 * lines, in the same order, a moment later. What is gathered is written before the process exits.
 */
type Chunk = string | Uint8Array;

let hosts = 0;
let restore: (() => void) | undefined;

/**
 * From now on, stdout is gathered per turn. Answers a function that writes what is gathered and, once every host
 * that asked has stopped (tests run several in one process), gives stdout its own `write` back.
 */
export function gatherPerTurn(): () => void {
  hosts += 1;
  restore ??= install();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    hosts -= 1;
    if (hosts === 0) {
      restore?.();
      restore = undefined;
    }
  };
}

function install(): () => void {
  const stdout = process.stdout;
  const original = stdout.write;
  let pending: Chunk[] = [];
  let callbacks: ((error?: Error | null) => void)[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunks = pending;
    const done = callbacks;
    pending = [];
    callbacks = [];
    const text = chunks.every((chunk) => typeof chunk === "string")
      ? chunks.join("")
      : Buffer.concat(chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk) : chunk)));
    original.call(stdout, text, undefined, (error?: Error | null) => {
      for (const callback of done) callback(error);
    });
  };
  const gathering = function write(
    chunk: Chunk,
    encodingOrCallback?: BufferEncoding | ((error?: Error | null) => void),
    callback?: (error?: Error | null) => void,
  ): boolean {
    // What stdout itself refuses (not text nor bytes) it refuses now, to its writer, never later in the flush.
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array))
      return (original as (...args: unknown[]) => boolean).call(stdout, chunk, encodingOrCallback, callback);
    const encoding = typeof encodingOrCallback === "string" ? encodingOrCallback : undefined;
    const done = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
    pending.push(
      typeof chunk === "string" && encoding && encoding !== "utf8" ? Buffer.from(chunk, encoding) : chunk,
    );
    if (done) callbacks.push(done);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return true;
  } as typeof stdout.write;
  stdout.write = gathering;
  // An exit (process.exit, the last uncaught error) between a write and the end of its turn loses no line.
  process.on("exit", flush);
  return () => {
    flush();
    process.off("exit", flush);
    if (stdout.write === gathering) stdout.write = original;
  };
}
