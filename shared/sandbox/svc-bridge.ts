/** The host side of `req.svc`: which calls a sandbox process may make, and what a failed call tells the code. */
import { httpErrorOf } from "#shared/http/problem.ts";
import { SVC_OPERATIONS, type SvcOperation } from "#shared/ports/sandbox.ts";
import type { SvcFailure, SvcMessage } from "./runner-protocol.ts";

/** Most svc calls one run may make; a loop of calls is a bug or an attack either way. */
const MAX_SVC_CALLS = 1000;

/** The operation and arguments of an svc call, or why it is refused. */
export function readSvcCall(
  message: SvcMessage,
  count: number,
): { op: SvcOperation; args: unknown[] } | string {
  const op = SVC_OPERATIONS.find((o) => o === message.op);
  if (op === undefined) return "unknown svc operation";
  if (count > MAX_SVC_CALLS) return `more than ${MAX_SVC_CALLS} svc calls in one run`;
  let args: unknown;
  try {
    args = JSON.parse(message.args);
  } catch {
    args = undefined;
  }
  return Array.isArray(args) ? { op, args } : "svc arguments must be a JSON array";
}

/**
 * What a failed svc call tells the code: a domain error as the HTTP API would answer it (status and detail,
 * nothing else), other errors with a status by message, anything else generically.
 */
export function svcFailure(error: unknown): SvcFailure {
  const known = httpErrorOf(error);
  if (known) return { message: known.detail, status: known.status };
  if (typeof error === "object" && error !== null) {
    const { status, statusCode, message, body } = error as Record<string, unknown>;
    const code = typeof status === "number" ? status : statusCode;
    if (typeof code === "number" && Number.isInteger(code) && typeof message === "string") {
      const info: SvcFailure = { message, status: code };
      if (body !== undefined) {
        try {
          info.body = JSON.parse(JSON.stringify(body));
        } catch {
          // not JSON-able: left out
        }
      }
      return info;
    }
  }
  return { message: "the svc call failed" };
}
