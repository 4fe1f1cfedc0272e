/**
 * The service's error log lines, kept by request id, so that a 5xx in the summary says what failed inside
 * (error name and message as the service logged them) without printing every request's log line.
 */

interface LoggedError {
  message: string;
  errorName?: string;
  errorMessage?: string;
  /** The first frame of the project's own code, when the line has a stack. */
  at?: string;
}

const errors = new Map<string, LoggedError>();
let installed = false;

/**
 * Takes over stdout's JSON log lines: errors are kept (and printed only when `echo`), the rest dropped.
 * The logger writes one JSON object per line; anything else passes through untouched.
 */
export function captureServiceLog(echo: boolean): void {
  if (installed) return;
  installed = true;
  // The logger writes errors to stderr, the rest to stdout.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      if (!text.startsWith('{"level":')) return write(chunk, ...rest);
      try {
        keep(JSON.parse(text) as Record<string, unknown>);
      } catch {
        // not one JSON line: let it through
        return write(chunk, ...rest);
      }
      return echo ? write(chunk, ...rest) : true;
    }) as typeof stream.write;
  }
}

function keep(line: Record<string, unknown>): void {
  const requestId = line.function_request_id ?? line.request_id;
  if (line.level !== "ERROR" || typeof requestId !== "string") return;
  const entry: LoggedError = { message: String(line.message) };
  if (typeof line.error_name === "string") entry.errorName = line.error_name;
  if (typeof line.error_message === "string") entry.errorMessage = line.error_message;
  if (typeof line.stack === "string") {
    const frame = line.stack
      .split("\n")
      .find((f) => /\.[cm]?[jt]s:\d+/.test(f) && !f.includes("node_modules"));
    if (frame) entry.at = frame.trim().replace(`${process.cwd()}/`, "");
  }
  errors.set(requestId, entry);
  if (typeof line.request_id === "string") errors.set(line.request_id, entry);
}

/** "Unhandled error: ValidationException" for the request id a problem body carries, if it was logged. */
export function loggedErrorFor(answerText: string): string | undefined {
  let requestId: unknown;
  try {
    const body = JSON.parse(answerText) as { request_id?: unknown; proxy_error?: { request_id?: unknown } };
    requestId = body.request_id ?? body.proxy_error?.request_id;
  } catch {
    return undefined;
  }
  const entry = typeof requestId === "string" ? errors.get(requestId) : undefined;
  if (!entry) return undefined;
  errors.delete(requestId as string);
  return [entry.message, entry.errorName, entry.errorMessage, entry.at].filter(Boolean).join(": ");
}
