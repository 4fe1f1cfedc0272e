import { AddressRefusedError } from "./address-guard.ts";

export type ForwardErrorCode =
  | "invalid_destination"
  | "forbidden_destination"
  | "timeout"
  | "unreachable"
  | "response_too_large";

/** status 4xx: the caller's fault; 502/504: the destination could not be used. Messages are safe to show. */
export class ForwardError extends Error {
  constructor(
    readonly status: number,
    readonly code: ForwardErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ForwardError";
  }
}

export const SELF_DESTINATION = "The destination is this service; a proxy cannot call itself.";
const FORBIDDEN =
  "The destination resolves to an address this service does not call (private, loopback, link-local, " +
  "metadata, reserved, or one of the service's own internal endpoints).";

/** A name resolved to this service itself (thrown by the self-guarded lookup, answered as SELF_DESTINATION). */
export class SelfDestinationError extends Error {}

export function invalid(message: string, cause?: unknown): ForwardError {
  return new ForwardError(400, "invalid_destination", message, cause === undefined ? undefined : { cause });
}

export function tooLarge(maxBytes: number): ForwardError {
  return new ForwardError(502, "response_too_large", `The destination's response exceeds ${maxBytes} bytes.`);
}

/** Map a socket/agent failure to a ForwardError. Messages never echo addresses (no DNS oracle). */
export function classify(error: unknown): ForwardError {
  if (error instanceof ForwardError) return error;
  if (error instanceof SelfDestinationError) return invalid(SELF_DESTINATION, error);
  const message = error instanceof Error ? error.message : "";
  // address-guard's refusal, or request-filtering-agent's ("DNS lookup <ip>(…) is not allowed. Because …";
  // it sets no code): one answer for both, naming no address and not which rule refused it.
  if (error instanceof AddressRefusedError || /^DNS lookup .* is not allowed\. Because/s.test(message))
    return new ForwardError(403, "forbidden_destination", FORBIDDEN, { cause: error });
  if ((error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT")
    return new ForwardError(504, "timeout", "Connecting to the destination timed out.", { cause: error });
  return new ForwardError(502, "unreachable", "The destination could not be reached.", { cause: error });
}
