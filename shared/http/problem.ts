import { DomainError, type ErrorKind, type FieldErrors } from "#shared/domain/errors.ts";
import { MAX_PROBLEM_FIELDS } from "#shared/domain/field-errors.ts";
import type { ReactionFailures } from "#shared/domain/reactors/callback-job.ts";
import { HttpError } from "./errors.ts";
import { isStoreOutage, OUTAGE_RETRY_AFTER_SECONDS } from "./outage.ts";

/** RFC 9457 problem details, the body of every error response. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldErrors;
  request_id?: string;
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";
const PROBLEM_BASE = "https://svc-vault.dev/problems/";

/** Each domain error kind as HTTP: status, problem type slug (unless the error names its own) and title. */
const HTTP_OF_KIND: Record<ErrorKind, { status: number; slug: string; title: string }> = {
  invalid: { status: 400, slug: "validation-error", title: "Bad Request" },
  unauthenticated: { status: 401, slug: "unauthorized", title: "Unauthorized" },
  forbidden: { status: 403, slug: "forbidden", title: "Forbidden" },
  "not-found": { status: 404, slug: "not-found", title: "Not Found" },
  conflict: { status: 409, slug: "conflict", title: "Conflict" },
  "too-large": { status: 413, slug: "payload-too-large", title: "Payload Too Large" },
  unprocessable: { status: 422, slug: "unprocessable", title: "Unprocessable Content" },
  "rate-limited": { status: 429, slug: "rate-limited", title: "Too Many Requests" },
  failed: { status: 500, slug: "failed", title: "Internal Server Error" },
  "upstream-failed": { status: 502, slug: "bad-gateway", title: "Bad Gateway" },
  unavailable: { status: 503, slug: "unavailable", title: "Service Unavailable" },
  locked: { status: 423, slug: "key-unavailable", title: "Locked" },
  "timed-out": { status: 504, slug: "timeout", title: "Gateway Timeout" },
};

function headersOf(error: DomainError): Record<string, string> | undefined {
  if (error.kind === "unauthenticated") return { "www-authenticate": "SVC-API-KEY" };
  if (error.retryAfterSeconds !== undefined) return { "retry-after": String(error.retryAfterSeconds) };
  return undefined;
}

/** The store could not be reached or answered "busy": worth retrying, unlike an unexpected failure. */
export const storeUnavailable = () =>
  new HttpError(
    503,
    "unavailable",
    "Service Unavailable",
    `The data store cannot be reached right now; retry in ${OUTAGE_RETRY_AFTER_SECONDS} s (with the same SVC-IDEMPOTENCY-KEY for a write).`,
    undefined,
    { "retry-after": String(OUTAGE_RETRY_AFTER_SECONDS) },
  );

/**
 * The one mapping from errors to HTTP: a DomainError by its kind, an HttpError as it is, a store outage as
 * 503 with Retry-After (outage.ts), anything else undefined (an unexpected failure: the caller sees
 * internalProblem only).
 */
export function httpErrorOf(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (!(error instanceof DomainError)) return isStoreOutage(error) ? storeUnavailable() : undefined;
  const http = HTTP_OF_KIND[error.kind];
  return new HttpError(
    error.statusFromCode ?? http.status,
    error.code ?? http.slug,
    error.title ?? http.title,
    error.detail,
    error.errors,
    headersOf(error),
  );
}

/** The problem a caller sees; at most MAX_PROBLEM_FIELDS fields (FieldErrorList keeps no more; this for the rest). */
export function problemFromError(error: HttpError, requestId?: string): Problem {
  const fields = error.errors ? Object.keys(error.errors) : [];
  const errors =
    error.errors && fields.length > MAX_PROBLEM_FIELDS
      ? Object.fromEntries(
          fields.slice(0, MAX_PROBLEM_FIELDS).map((field) => [field, error.errors?.[field] ?? []]),
        )
      : error.errors;
  const detail =
    fields.length > MAX_PROBLEM_FIELDS
      ? `${error.detail} (the first ${MAX_PROBLEM_FIELDS} of ${fields.length} fields in error are listed)`
      : error.detail;
  return {
    type: `${PROBLEM_BASE}${error.slug}`,
    title: error.title,
    status: error.status,
    detail,
    ...(errors ? { errors } : {}),
    ...(requestId ? { request_id: requestId } : {}),
  };
}

/** The only body a caller sees for an unexpected failure: no message, no stack, just the request id. */
export function internalProblem(requestId?: string): Problem {
  return {
    type: `${PROBLEM_BASE}internal-error`,
    title: "Internal Server Error",
    status: 500,
    detail: "An unexpected error occurred. Quote the request id when reporting it.",
    ...(requestId ? { request_id: requestId } : {}),
  };
}

/** Failed reactions told in a callback webhook: the status and problem the synchronous react answers. */
export const reactionFailures: ReactionFailures = {
  ofError(error, requestId) {
    const http = httpErrorOf(error);
    if (http) return { status: http.status, body: problemFromError(http, requestId), problem: true };
    return {
      status: 500,
      problem: true,
      body: {
        type: "about:blank",
        title: "Internal Server Error",
        status: 500,
        detail: "The reactor failed.",
      },
    };
  },
  unrunnable: (requestId) => ({ status: 500, body: internalProblem(requestId), problem: true }),
};
