import type { FieldErrors } from "#shared/domain/errors.ts";

/**
 * Errors of the HTTP protocol itself (a method or media type the route does not take, an idempotency key
 * reused differently): they have no meaning in the domain. Domain failures are DomainErrors
 * (shared/domain/errors.ts); problem.ts maps both to problem+json, and exactly one middleware
 * (error-handler) answers with it.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    /** Shown to the caller: must never hold token data, keys or secrets. */
    readonly detail: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = "HttpError";
  }
}

export const methodNotAllowed = (allowed: string[]) =>
  new HttpError(
    405,
    "method-not-allowed",
    "Method Not Allowed",
    `Allowed methods: ${allowed.join(", ")}.`,
    undefined,
    { allow: allowed.join(", ") },
  );

export const unsupportedMediaType = (expected: string) =>
  new HttpError(
    415,
    "unsupported-media-type",
    "Unsupported Media Type",
    `The Content-Type must be ${expected}.`,
  );
