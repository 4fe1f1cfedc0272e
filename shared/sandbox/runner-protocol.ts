/**
 * Messages between the host (sandbox-process.ts) and a sandbox process (child.mjs) over Node's IPC channel.
 * child.mjs is plain JavaScript and cannot import this file at run time; its JSDoc types import these
 * (`npm run typecheck`, tsconfig.sandbox.json), so both sides are checked against one description.
 *
 * Values cross as JSON strings: the child parses the input INSIDE the run's context (so `req` has that
 * context's intrinsics) and serialises results there, so no object of one realm reaches another.
 */

/** Host → child: run the code whose SHA-256 is `hash` (the code itself only on a process's first run). */
export interface RunMessage {
  t: "run";
  id: number;
  hash: string;
  code?: string;
  /** JSON of `req` without `svc`. */
  input: string;
  /** `req.args.body` is JSON text for the child to parse in the run's context (SandboxRequest.parseArgsBody). */
  parseArgsBody?: boolean;
  /** Whether `req.svc` is a client (true) or null. */
  svc: boolean;
  /** Limit for the synchronous part (vm timeout); the host kills the process at the same limit overall. */
  timeoutMs: number;
  /** Longest JSON (in UTF-16 units) the child sends back for a result or an svc call's arguments. */
  maxResultChars: number;
}

/** Host → child: the answer to an svc call. ok: payload is the value's JSON (absent for undefined). */
export interface SvcResultMessage {
  t: "svc-result";
  id: number;
  call: number;
  ok: boolean;
  /** ok: the value's JSON; not ok: JSON of SvcFailure. */
  payload?: string;
}

export interface SvcFailure {
  message: string;
  status?: number;
  body?: unknown;
}

/** Host → child: the answer to a fetch. ok: payload is JSON of FetchAnswer; not ok: JSON of FetchFailure. */
export interface FetchResultMessage {
  t: "fetch-result";
  id: number;
  call: number;
  ok: boolean;
  payload: string;
}

/** What a fetch answers the code: the body base64-encoded (absent for none). */
export interface FetchAnswer {
  status: number;
  statusText: string;
  url: string;
  redirected: boolean;
  headers: [string, string][];
  body?: string;
}

/** Why a fetch failed: node-fetch's FetchError `type` (or "aborted") and a message naming no address. */
export interface FetchFailure {
  message: string;
  type: string;
}

export type HostMessage = RunMessage | SvcResultMessage | FetchResultMessage;

/** Child → host: started and ready for its first run (nobody's code has run in it yet). */
export interface ReadyMessage {
  t: "ready";
}

/**
 * Child → host: a run ended.
 * - ok: payload is the result's JSON (absent when the code returned undefined)
 * - thrown / invalid-code: payload is JSON of ThrownInfo
 * - timeout: the synchronous part passed the vm timeout
 * - too-large: the result's JSON passed maxResultChars
 */
export interface DoneMessage {
  t: "done";
  id: number;
  kind: DoneKind;
  payload?: string;
}

export const DONE_KINDS = ["ok", "thrown", "invalid-code", "timeout", "too-large"] as const;
export type DoneKind = (typeof DONE_KINDS)[number];

export interface ThrownInfo {
  name: string;
  message: string;
  status?: number;
  body?: unknown;
  /** The typed errors' field messages (reactor-errors.cjs): a map of string lists. */
  errors?: Record<string, string[]>;
  /** A CustomHttpResponseError's `headers`: at most 50 string values (filtered again before answering). */
  headers?: Record<string, string>;
}

/** Child → host: the code called `req.svc.<op>(...args)`; args is the JSON of the argument array. */
export interface SvcMessage {
  t: "svc";
  id: number;
  call: number;
  op: string;
  args: string;
}

/** Child → host: the code called `fetch`; request is JSON of the request (read by outbound-request.ts). */
export interface FetchMessage {
  t: "fetch";
  id: number;
  call: number;
  request: string;
}

/** Child → host: the code aborted fetch `call` (its AbortSignal); nothing is answered. */
export interface FetchCancelMessage {
  t: "fetch-cancel";
  id: number;
  call: number;
}

export type ChildMessage = ReadyMessage | DoneMessage | SvcMessage | FetchMessage | FetchCancelMessage;

const isId = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value > 0;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads a message from a child. The child runs untrusted code, so its messages are checked like any other
 * input: anything malformed is undefined (and the host kills the process).
 */
export function readChildMessage(raw: unknown): ChildMessage | undefined {
  if (!isRecord(raw)) return undefined;
  switch (raw.t) {
    case "ready":
      return { t: "ready" };
    case "done": {
      const kind = DONE_KINDS.find((k) => k === raw.kind);
      if (!isId(raw.id) || kind === undefined) return undefined;
      if (raw.payload !== undefined && typeof raw.payload !== "string") return undefined;
      return { t: "done", id: raw.id, kind, payload: raw.payload };
    }
    case "svc":
      if (!isId(raw.id) || !isId(raw.call) || typeof raw.op !== "string" || typeof raw.args !== "string")
        return undefined;
      return { t: "svc", id: raw.id, call: raw.call, op: raw.op, args: raw.args };
    case "fetch":
      if (!isId(raw.id) || !isId(raw.call) || typeof raw.request !== "string") return undefined;
      return { t: "fetch", id: raw.id, call: raw.call, request: raw.request };
    case "fetch-cancel":
      if (!isId(raw.id) || !isId(raw.call)) return undefined;
      return { t: "fetch-cancel", id: raw.id, call: raw.call };
    default:
      return undefined;
  }
}

/** Parses a ThrownInfo payload; whatever does not fit becomes a plain message. */
export function readThrownInfo(payload: string | undefined): ThrownInfo {
  let parsed: unknown;
  try {
    parsed = payload === undefined ? undefined : JSON.parse(payload);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed)) return { name: "Error", message: "" };
  const info: ThrownInfo = {
    name: typeof parsed.name === "string" ? parsed.name.slice(0, 200) : "Error",
    message: typeof parsed.message === "string" ? parsed.message.slice(0, 2000) : "",
  };
  if (typeof parsed.status === "number" && Number.isInteger(parsed.status)) info.status = parsed.status;
  if (parsed.body !== undefined) info.body = parsed.body;
  const errors = fieldMessages(parsed.errors);
  if (errors !== undefined) info.errors = errors;
  const headers = headerValues(parsed.headers);
  if (headers !== undefined) info.headers = headers;
  return info;
}

/** At most 50 headers, names up to 200 and values up to 8,000 characters; values that are not strings or numbers dropped. */
function headerValues(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const headers: Record<string, string> = Object.create(null);
  let count = 0;
  for (const [name, raw] of Object.entries(value)) {
    if (typeof raw !== "string" && typeof raw !== "number") continue;
    if (name.length > 200 || String(raw).length > 8000) continue;
    headers[name] = String(raw);
    if (++count >= 50) break;
  }
  return count > 0 ? headers : undefined;
}

/** At most 50 fields of at most 20 strings each, each string at most 1,000 characters; anything else is dropped. */
function fieldMessages(value: unknown): Record<string, string[]> | undefined {
  if (!isRecord(value)) return undefined;
  const errors: Record<string, string[]> = Object.create(null);
  let fields = 0;
  for (const [field, messages] of Object.entries(value)) {
    if (!Array.isArray(messages)) continue;
    const kept = messages
      .filter((m): m is string => typeof m === "string")
      .slice(0, 20)
      .map((m) => m.slice(0, 1000));
    if (kept.length === 0) continue;
    errors[field.slice(0, 200)] = kept;
    if (++fields >= 50) break;
  }
  return fields > 0 ? { ...errors } : undefined;
}
