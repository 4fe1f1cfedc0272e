/**
 * Errors that mean "the store (or another AWS service) cannot answer now", told apart by name and code only
 * (SDK v3 errors; no AWS types here). Such a request may be retried as it is: the answer is 503 with
 * Retry-After (problem.ts), never a generic 500. A write whose outcome is unknown (a timeout after sending) is
 * safe to retry with the same SVC-IDEMPOTENCY-KEY.
 */

import { cancellationCodes } from "#shared/aws-errors.ts";

/** Seconds a client should wait before retrying: about a restart of DynamoDB Local, several SDK backoffs. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;

/** The service throttled or failed on its side; the SDK already retried (bounded by maxAttempts). */
const SERVICE_BUSY = new Set([
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "InternalServerError",
  "InternalFailure",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "KMSInternalException",
]);

/** The connection failed, dropped, or timed out (Node and @smithy/node-http-handler). */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "ERR_SOCKET_CONNECTION_TIMEOUT",
  "UND_ERR_SOCKET",
]);

/** A transaction's per-item reasons that a retry may clear (any other reason is the caller's answer). */
const TRANSIENT_CANCELLATIONS = new Set([
  "None",
  "TransactionConflict",
  "ThrottlingError",
  "ProvisionedThroughputExceeded",
  "RequestLimitExceeded",
]);

function field(error: object, name: string): unknown {
  return (error as Record<string, unknown>)[name];
}

export function isStoreOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "TimeoutError" || SERVICE_BUSY.has(error.name)) return true;
  const code = field(error, "code");
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  if (error.name === "TransactionCanceledException") {
    // Cancelled by a failed condition: the domain's answer (it maps those itself), not an outage.
    const codes = cancellationCodes(error);
    return (
      codes !== undefined && codes.length > 0 && codes.every((code) => TRANSIENT_CANCELLATIONS.has(code))
    );
  }
  // A dropped connection can surface wrapped (fetch's TypeError "fetch failed" and the like).
  const cause = field(error, "cause");
  return cause instanceof Error && cause !== error && isStoreOutage(cause);
}
