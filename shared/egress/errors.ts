import { EgressError } from "#shared/ports/egress.ts";
import { AddressRefusedError } from "./address-guard.ts";

export const SELF_DESTINATION = "The destination is this service; a proxy cannot call itself.";
const FORBIDDEN =
  "The destination resolves to an address this service does not call (private, loopback, link-local, " +
  "metadata, reserved, or one of the service's own internal endpoints).";

/** A name resolved to this service itself (thrown by the self-guarded lookup, answered as SELF_DESTINATION). */
export class SelfDestinationError extends Error {}

/**
 * Why one exchange (exchange.ts) failed, for its callers to word in their own terms (EgressError for proxies
 * and callbacks, OutboundError for tenant code's fetch). Never names an address (no DNS oracle).
 * - refused: the connect-time address rule; self: a name resolved to this service; timeout: the exchange's
 *   deadline; closed: the destination hung up mid-answer; too-large: past maxBytes; aborted: the caller's
 *   signal; invalid: Node could not send the request; unreachable: any other socket failure (`errno` says which).
 */
export type FailureKind =
  | "refused"
  | "self"
  | "timeout"
  | "closed"
  | "too-large"
  | "aborted"
  | "invalid"
  | "unreachable";

export class ExchangeFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    options: { cause?: unknown; errno?: string } = {},
  ) {
    super(
      `outbound exchange failed: ${kind}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "ExchangeFailure";
    this.errno = options.errno;
  }
  /** The socket's error code (ECONNREFUSED, ETIMEDOUT, …) when it had a well-formed one. */
  readonly errno: string | undefined;
}

/** The one classification of a socket, agent or lookup failure. */
export function classify(error: unknown): ExchangeFailure {
  if (error instanceof ExchangeFailure) return error;
  if (error instanceof SelfDestinationError) return new ExchangeFailure("self", { cause: error });
  const message = error instanceof Error ? error.message : "";
  // address-guard's refusal, or request-filtering-agent's ("DNS lookup <ip>(…) is not allowed. Because …";
  // it sets no code): one answer for both, naming no address and not which rule refused it.
  if (error instanceof AddressRefusedError || /^DNS lookup .* is not allowed\. Because/s.test(message))
    return new ExchangeFailure("refused", { cause: error });
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const errno = typeof code === "string" && /^E[A-Z_]+$/.test(code) ? code : undefined;
  return new ExchangeFailure("unreachable", { cause: error, ...(errno ? { errno } : {}) });
}

export function invalid(message: string, cause?: unknown): EgressError {
  return new EgressError(400, "invalid_destination", message, cause === undefined ? undefined : { cause });
}

/** A failed exchange as a proxy's or callback's EgressError. */
export function egressError(
  failure: ExchangeFailure,
  limits: { timeoutMs: number; maxBytes: number },
): EgressError {
  const cause = { cause: failure.cause ?? failure };
  switch (failure.kind) {
    case "self":
      return invalid(SELF_DESTINATION, failure.cause);
    case "refused":
      return new EgressError(403, "forbidden_destination", FORBIDDEN, cause);
    case "timeout":
      return new EgressError(504, "timeout", `The destination did not answer within ${limits.timeoutMs} ms.`);
    case "too-large":
      return new EgressError(
        502,
        "response_too_large",
        `The destination's response exceeds ${limits.maxBytes} bytes.`,
      );
    case "closed":
      return new EgressError(502, "unreachable", "The destination closed the connection.");
    default:
      if (failure.errno === "ETIMEDOUT")
        return new EgressError(504, "timeout", "Connecting to the destination timed out.", cause);
      return new EgressError(502, "unreachable", "The destination could not be reached.", cause);
  }
}
