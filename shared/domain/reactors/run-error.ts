import { readableMessage } from "#shared/domain/code-messages.ts";
import { DomainError, type FieldErrors } from "#shared/domain/errors.ts";
import { codeAnswerHeaders } from "#shared/domain/proxies/headers.ts";
import type { SandboxError } from "#shared/ports/sandbox.ts";
import { invalidCode } from "./manage.ts";

/** An error the formula's code threw with a status: answered as problem+json, or as its own body (custom). */
export class ReactorError extends DomainError {
  customBody?: unknown;
  /** A CustomHttpResponseError's headers, as answered: through the proxies' one response filter. */
  customHeaders?: Record<string, string>;
  constructor(
    /** The status the code threw with (a CustomHttpResponseError's may be 2xx or 3xx too). */
    readonly status: number,
    name: string,
    message: string,
    errors?: FieldErrors,
  ) {
    super(status >= 500 ? "failed" : "invalid", message, {
      code: "reactor-error",
      title: name,
      statusFromCode: status,
      ...(errors ? { errors } : {}),
    });
  }
}

/** A typed error's field messages: only string lists survive (the sandbox protocol already capped them). */
function fieldErrorsOf(value: unknown): FieldErrors | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value)
    .map(
      ([field, messages]) =>
        [field, [messages].flat().filter((m): m is string => typeof m === "string")] as const,
    )
    .filter(([, messages]) => messages.length > 0);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

const isStatus = (status: number | undefined, low: number): status is number =>
  status !== undefined && Number.isInteger(status) && status >= low && status <= 599;

/**
 * What a failed run answers (docs/reactors.md, "Errors"):
 * - code that cannot run: 422; past its time: 504;
 * - a thrown error with a status (the typed errors, or any error given an integer `status` 400–599): that
 *   status, the error's name as title, its message as detail and its field messages as `errors`;
 * - `CustomHttpResponseError`: its own status (200–599), body and headers (filtered as a proxy's answer's);
 * - anything else thrown: 500 with the message in `errors.error`, so a developer sees what broke;
 * - the sandbox stopping the run (memory, crash): 500 with the sandbox's own fixed message.
 * Never a stack, never a host path.
 */
export function reactorFailure(error: SandboxError, timeoutMs: number): DomainError {
  if (error.kind === "invalid-code") return invalidCode(`The formula's code cannot run: ${error.message}`);
  if (error.kind === "timeout")
    return new DomainError("timed-out", `The reactor did not finish within ${timeoutMs} ms.`, {
      code: "reactor-timeout",
    });
  if (error.kind !== "thrown") {
    const message = readableMessage(error.message);
    return new ReactorError(500, "Reactor Runtime Error", `The reactor failed: ${message}`, {
      error: [message],
    });
  }
  const message = readableMessage(error.message);
  const name = (error.name ?? "Error").slice(0, 200);
  const custom = error.name === "CustomHttpResponseError";
  if (custom && isStatus(error.status, 200)) {
    const failure = new ReactorError(error.status, name, message);
    failure.customBody = error.body ?? {};
    failure.customHeaders = codeAnswerHeaders(error.headers);
    return failure;
  }
  const bodyErrors =
    typeof error.body === "object" && error.body !== null && "errors" in error.body
      ? fieldErrorsOf(error.body.errors)
      : undefined;
  const errors = fieldErrorsOf(error.errors) ?? bodyErrors;
  if (isStatus(error.status, 400))
    return new ReactorError(error.status, name, message || name, errors && readableErrors(errors));
  const detail = message || `${name} (no message)`;
  return new ReactorError(500, "Reactor Runtime Error", detail, {
    ...(errors ? readableErrors(errors) : {}),
    error: [detail],
  });
}

const readableErrors = (errors: FieldErrors): FieldErrors =>
  Object.fromEntries(
    Object.entries(errors).map(([field, messages]) => [field, messages.map(readableMessage)]),
  );
