/**
 * The outbound half of a proxy invocation or a callback delivery: send an already-detokenized request to its
 * destination and return the destination's raw response (status, headers, body bytes unchanged).
 *
 * SSRF: every connection goes through address-guard.ts's agents, which check every address AT CONNECT
 * TIME (IP literals before a socket exists, names after their DNS lookup), so a name that resolves to a
 * refused address, or that re-binds to one between checks, is refused before any packet reaches it.
 * Link-local/metadata addresses and the service's internal endpoints (DynamoDB Local, the local API) are
 * refused always; private, loopback and reserved ones unless private destinations are allowed.
 *
 * Path suffixes are never normalized (request-path.ts); destinations that are this service are refused
 * (destination-target.ts, self-hosts.ts); connections are pooled per tenant (pools.ts).
 */
import { outboundHeaders, responseHeaders } from "#shared/domain/proxies/headers.ts";
import {
  type EgressOptions,
  FORWARD_TIMEOUT_MS,
  type OutboundRequest,
  type OutboundResponse,
} from "#shared/ports/egress.ts";
import { resolveTarget } from "./destination-target.ts";
import { ExchangeFailure, egressError } from "./errors.ts";
import { exchange } from "./exchange.ts";
import { plainLookup, selfGuardedLookup } from "./self-hosts.ts";

export const DEFAULT_TIMEOUT_MS = FORWARD_TIMEOUT_MS;
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

export async function forward(request: OutboundRequest, options: EgressOptions): Promise<OutboundResponse> {
  const method = request.method.toUpperCase();
  if (!METHODS.has(method)) throw new TypeError(`forward: unsupported method ${request.method}`);
  const target = resolveTarget(request, options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const headers = outboundHeaders(request.headers);
  headers.host = target.url.host;
  if (request.body !== undefined) headers["content-length"] = String(request.body.length);
  try {
    const answer = await exchange(
      {
        url: target.url,
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        method,
        headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        lookup: target.guardLookup ? selfGuardedLookup : plainLookup,
      },
      { tenantId: request.tenantId, allowPrivate: options.allowPrivate, timeoutMs, maxBytes },
    );
    return { status: answer.status, headers: responseHeaders(answer.headers), body: answer.body };
  } catch (error) {
    // "invalid": Node refused a header, path or method the checks above leave none of; a bug, not the caller's.
    if (!(error instanceof ExchangeFailure)) throw error;
    if (error.kind === "invalid") throw error.cause;
    throw egressError(error, { timeoutMs, maxBytes });
  }
}
