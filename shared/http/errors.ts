/**
 * Errors that carry their HTTP meaning. Exactly one middleware (error-handler) turns them into
 * problem+json; anything that is not an HttpError becomes a generic 500.
 */
export type FieldErrors = Record<string, string[]>;

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

export const validationError = (detail: string, errors?: FieldErrors) =>
  new HttpError(400, "validation-error", "Bad Request", detail, errors);

export const unauthorized = (detail = "A valid SVC-API-KEY header is required.") =>
  new HttpError(401, "unauthorized", "Unauthorized", detail, undefined, {
    "www-authenticate": "SVC-API-KEY",
  });

export const forbidden = (detail: string) => new HttpError(403, "forbidden", "Forbidden", detail);

export const notFound = (what = "The requested resource") =>
  new HttpError(404, "not-found", "Not Found", `${what} was not found.`);

export const methodNotAllowed = (allowed: string[]) =>
  new HttpError(
    405,
    "method-not-allowed",
    "Method Not Allowed",
    `Allowed methods: ${allowed.join(", ")}.`,
    undefined,
    { allow: allowed.join(", ") },
  );

export const conflict = (detail: string) => new HttpError(409, "conflict", "Conflict", detail);

export const payloadTooLarge = (limit: number) =>
  new HttpError(413, "payload-too-large", "Payload Too Large", `The request body exceeds ${limit} bytes.`);

export const unsupportedMediaType = (expected: string) =>
  new HttpError(
    415,
    "unsupported-media-type",
    "Unsupported Media Type",
    `The Content-Type must be ${expected}.`,
  );
