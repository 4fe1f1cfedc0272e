/**
 * The errors the domain throws, in its own words. The domain never chooses an HTTP status, header or
 * problem type: shared/http/problem.ts maps each kind to those (the one mapping), and the error-handler
 * middleware answers with it. Anything that is not a DomainError is an unexpected failure (a generic 500).
 */
export type FieldErrors = Record<string, string[]>;

export type ErrorKind =
  /** The input is wrong (field messages in `errors`). */
  | "invalid"
  /** No valid credential. */
  | "unauthenticated"
  /** A valid credential that may not do this. */
  | "forbidden"
  | "not-found"
  /** The state forbids it (a taken id, a resource still in use, a race lost). */
  | "conflict"
  /** The input is larger than allowed. */
  | "too-large"
  /** Well-formed, but cannot be processed (code that does not compile). */
  | "unprocessable"
  /** The tenant's request budget is spent for now (`retryAfterSeconds` says when to retry). */
  | "rate-limited"
  /** The operation failed on our side (tenant code failed, a transform answered nonsense). */
  | "failed"
  /** A destination the operation calls (proxy destination) failed or answered too much. */
  | "upstream-failed"
  /** A capability this deployment does not offer. */
  | "unavailable"
  /** The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant opens until it is back. */
  | "locked"
  /** The operation or its destination did not finish in time. */
  | "timed-out";

export interface DomainErrorOptions {
  /** A finer name for the failure (the problem type's slug); each kind has a default. */
  code?: string;
  /** A title instead of the kind's (e.g. "Transform Failed", the name of a reactor's error class). */
  title?: string;
  errors?: FieldErrors;
  retryAfterSeconds?: number;
  /**
   * A status that tenant code chose (a reactor's `BadRequestError` is 400, any 4xx/5xx it threw is its
   * own): answered as it is, whatever the kind.
   */
  statusFromCode?: number;
}

export class DomainError extends Error {
  readonly code?: string;
  readonly title?: string;
  readonly errors?: FieldErrors;
  readonly retryAfterSeconds?: number;
  readonly statusFromCode?: number;

  constructor(
    readonly kind: ErrorKind,
    /** Shown to the caller: must never hold token data, keys or secrets. */
    readonly detail: string,
    options: DomainErrorOptions = {},
  ) {
    super(detail);
    this.name = "DomainError";
    if (options.code !== undefined) this.code = options.code;
    if (options.title !== undefined) this.title = options.title;
    if (options.errors !== undefined) this.errors = options.errors;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    if (options.statusFromCode !== undefined) this.statusFromCode = options.statusFromCode;
  }

  /** The same failure under another class (ProxyError, DetokenizeError): kind, detail and options kept. */
  options(): DomainErrorOptions {
    return {
      ...(this.code !== undefined ? { code: this.code } : {}),
      ...(this.title !== undefined ? { title: this.title } : {}),
      ...(this.errors !== undefined ? { errors: this.errors } : {}),
      ...(this.retryAfterSeconds !== undefined ? { retryAfterSeconds: this.retryAfterSeconds } : {}),
      ...(this.statusFromCode !== undefined ? { statusFromCode: this.statusFromCode } : {}),
    };
  }
}

export const validationError = (detail: string, errors?: FieldErrors) =>
  new DomainError("invalid", detail, errors ? { errors } : {});

/** An answer a Lambda result could not carry (answer-size.ts): a 500 naming why, never a failed invocation. */
export const answerTooLarge = () =>
  new DomainError("failed", "The answer is larger than a response can carry.", { code: "answer-too-large" });

export const unauthorized = (detail = "A valid SVC-API-KEY header is required.") =>
  new DomainError("unauthenticated", detail);

export const forbidden = (detail: string, errors?: FieldErrors) =>
  new DomainError("forbidden", detail, errors ? { errors } : {});

export const notFound = (what = "The requested resource") =>
  new DomainError("not-found", `${what} was not found.`);

export const conflict = (detail: string, options?: DomainErrorOptions) =>
  new DomainError("conflict", detail, options);

export const payloadTooLarge = (limit: number) =>
  new DomainError("too-large", `The request body exceeds ${limit} bytes.`);

export const tooManyRequests = (retryAfterSeconds: number) =>
  new DomainError("rate-limited", `The request rate limit is exhausted; retry in ${retryAfterSeconds} s.`, {
    retryAfterSeconds,
  });
