import type { FieldErrors, HttpError } from "./errors.ts";

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

export function problemFromError(error: HttpError, requestId?: string): Problem {
  return {
    type: `${PROBLEM_BASE}${error.slug}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    ...(error.errors ? { errors: error.errors } : {}),
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
