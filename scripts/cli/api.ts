/**
 * The CLI's HTTP calls: one request with the API key, retried on 429 (after its Retry-After) and on 503 or a
 * connection failure (after a growing back-off). Any other answer is handed back as it is.
 */

export type WaitReason = "rate-limited" | "unavailable" | "in flight";

export interface ApiOptions {
  url: string;
  key: string;
  /** Waits `ms`; tests pass one that moves the service's test clock instead of the wall clock. */
  sleep?: (ms: number, reason: WaitReason) => Promise<void>;
  /** Tries per request before giving up (429, 503 and connection failures count). */
  attempts?: number;
  signal?: AbortSignal;
  /** Told each time a request waits (progress shows it). */
  onWait?: (ms: number, reason: WaitReason) => void;
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** An answer the CLI cannot go on after: a bad key, an unreachable service. The message holds no data. */
export class CliError extends Error {}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), else undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Text the server wrote, made safe for a terminal: control characters (ESC, BEL, CR, line breaks, C1) and
 * bidirectional overrides escaped as `\uXXXX`. A hostile or compromised server (or anything on the path, with
 * --allow-plain-http) otherwise wrote the user's clipboard (OSC 52) or rewrote the summary on screen ("0 failed").
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is escaped
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/g;
export const fromServer = (text: string): string =>
  text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * A key a header can carry: printable ASCII without spaces. A SVC_API_KEY of two lines (`$(cat keys.txt)`) made
 * fetch throw a message quoting the whole value, which ended up on stderr after ten retries.
 */
const HEADER_SAFE_KEY = /^[\x21-\x7e]+$/;

export async function request(
  options: ApiOptions,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  // Surrounding whitespace is trimmed by fetch, as a header's value is (a key file saved with CRLF).
  if (!HEADER_SAFE_KEY.test(options.key.trim()))
    throw new CliError(
      "the API key holds a space, a line break or a character an HTTP header cannot carry; check SVC_API_KEY (one key, one line)",
    );
  const sleep = options.sleep ?? defaultSleep;
  const attempts = options.attempts ?? 10;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    let answer: ApiAnswer | undefined;
    let failure: unknown;
    try {
      const res = await fetch(`${options.url}${path}`, {
        method,
        headers: {
          "svc-api-key": options.key,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        // Never followed: fetch would send the key header and the body (card data) on to wherever it points.
        redirect: "manual",
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: kept as text
      }
      answer = { status: res.status, headers: res.headers, body: parsed };
    } catch (error) {
      if (options.signal?.aborted) throw error;
      failure = error;
    }
    if (answer && answer.status >= 300 && answer.status < 400) {
      const to = answer.headers.get("location");
      const where = to && URL.canParse(to, options.url) ? ` to ${new URL(to, options.url).origin}` : "";
      throw new CliError(
        `${options.url} answered a redirect${where}; nothing was sent there. Pass the final --url.`,
      );
    }
    const backOff = Math.min(30_000, 500 * 2 ** (attempt - 1));
    const reason = answer ? retryable(answer) : "unavailable";
    if (answer && !reason) return answer;
    if (attempt >= attempts) {
      if (answer) return answer;
      // Named by its code, never its message: a fetch error's message may quote what was sent (a header's value).
      const cause = (failure as { cause?: { code?: unknown } })?.cause?.code;
      throw new CliError(
        `cannot reach ${options.url} (${typeof cause === "string" ? cause : ((failure as Error)?.name ?? "connection failed")})`,
      );
    }
    const asked = answer ? retryAfterMs(answer.headers.get("retry-after")) : undefined;
    // A request still running (or a batch holding a value: up to a minute) gets the growing back-off at least,
    // so the attempts span minutes, not the 10 s of ten 1 s waits.
    const wait = reason === "in flight" ? Math.max(asked ?? 0, backOff) : (asked ?? backOff);
    options.onWait?.(wait, reason as WaitReason);
    await sleep(wait, reason as WaitReason);
  }
}

/**
 * Why an answer is worth asking again: 429 and 503, and the 409 of an idempotency key whose first request is
 * still running (an import killed mid-batch and rerun at once: the service is still finishing that batch).
 */
function retryable(answer: ApiAnswer): WaitReason | undefined {
  if (answer.status === 429) return "rate-limited";
  if (answer.status === 503) return "unavailable";
  if (answer.status === 409 && /still being processed/.test(problemOf(answer).detail ?? ""))
    return "in flight";
  return undefined;
}

/** A problem+json answer's detail, without anything else of the body (never data). */
export function problemOf(answer: ApiAnswer): { status: number; title?: string; detail?: string } {
  const body = (typeof answer.body === "object" && answer.body !== null ? answer.body : {}) as Record<
    string,
    unknown
  >;
  return {
    status: answer.status,
    ...(typeof body.title === "string" ? { title: fromServer(body.title) } : {}),
    ...(typeof body.detail === "string" ? { detail: fromServer(body.detail) } : {}),
  };
}

/** Fails with a clear message on the answers that stop the whole run (401, 403 and the like). */
export function stopOn(answer: ApiAnswer, what: string): void {
  if (answer.status === 401) throw new CliError(`${what}: the key was refused (401); check --key`);
  if (answer.status === 403)
    throw new CliError(`${what}: the key lacks the permission (403): ${problemOf(answer).detail ?? ""}`);
  if (answer.status === 404) throw new CliError(`${what}: not found (404); is --url the vault's base URL?`);
  // The tenant's own KMS key refuses: nothing of it is written or read until it is back (no line's fault).
  if (answer.status === 423)
    throw new CliError(
      `${what}: the tenant's key refuses (423): ${problemOf(answer).detail ?? ""}; run again once it is back to resume`,
    );
  if (retryable(answer) === "in flight")
    throw new CliError(`${what}: the service is still processing it; run again in a minute to resume`);
  if (answer.status === 429 || answer.status === 503 || answer.status >= 500)
    throw new CliError(`${what}: the service answered ${answer.status}; run again to resume`);
}
