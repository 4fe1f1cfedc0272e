/**
 * Carries out a tenant code's `fetch` in the host (the sandbox process has no network): through the egress
 * module's exchange (shared/egress/exchange.ts: the connect-time address rule of proxies and callbacks, one
 * connection pool per tenant), redirects followed only after checking each hop again, within the run's limits. Each request is
 * logged with the allowed_hosts entry its host matched, method, status, bytes and time; never its host as written,
 * URL path, headers or body.
 */
import { classify, ExchangeFailure } from "#shared/egress/errors.ts";
import { exchange } from "#shared/egress/exchange.ts";
import { logger } from "#shared/logger.ts";
import {
  type CodeRequest,
  destinationRefusal,
  isRedirect,
  listedHost,
  MAX_REDIRECTS,
  OutboundError,
  type OutboundPolicy,
  type RunBudget,
  redirected,
} from "./outbound-request.ts";
import type { FetchAnswer } from "./runner-protocol.ts";

export interface FetchContext {
  tenantId: string;
  policy: OutboundPolicy;
  /** The formula's or proxy's allowed hosts; undefined allows any host the address rule allows. */
  allowedHosts: readonly string[] | undefined;
  budget: RunBudget;
  /** Aborted when the run ends or the code aborts the request. */
  signal: AbortSignal;
}

interface Exchange {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Buffer;
}

/** The code's request, carried out; rejects with an OutboundError the code may see. */
export async function carryOutFetch(first: CodeRequest, context: FetchContext): Promise<FetchAnswer> {
  let request = first;
  for (let hop = 0; ; hop++) {
    const refusal = destinationRefusal(request.url, context.policy, context.allowedHosts);
    if (refusal !== undefined)
      throw new OutboundError(`request to ${request.url.origin} refused: ${refusal}`, "refused");
    const timeoutMs = context.budget.startRequest(request);
    const answer = await exchangeOnce(request, timeoutMs, context);
    const location = answer.headers.find(([name]) => name === "location")?.[1];
    if (!isRedirect(answer.status) || location === undefined || request.redirect === "manual")
      return {
        status: answer.status,
        statusText: answer.statusText,
        url: request.url.href,
        redirected: hop > 0,
        headers: answer.headers,
        body: answer.body.toString("base64"),
      };
    if (request.redirect === "error")
      throw new OutboundError(
        `request to ${request.url.origin} was redirected (redirect: "error")`,
        "no-redirect",
      );
    if (hop >= MAX_REDIRECTS)
      throw new OutboundError(
        `request to ${first.url.origin} redirected more than ${MAX_REDIRECTS} times`,
        "max-redirect",
      );
    request = redirected(request, answer.status, location);
  }
}

/** One request/response, cut at its timeout, the run's bytes-in limit or the run's end. */
async function exchangeOnce(
  request: CodeRequest,
  timeoutMs: number,
  context: FetchContext,
): Promise<Exchange> {
  const { url } = request;
  const started = performance.now();
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers)
    headers[name] = headers[name] ? `${headers[name]}, ${value}` : value;
  headers.host = url.host;
  headers.accept ??= "*/*";
  headers["user-agent"] ??= "svc-vault-fetch";
  if (request.body !== undefined) headers["content-length"] = String(request.body.length);
  let bytesIn = 0;
  const log = (status: number, failure?: OutboundError["type"]) =>
    logger.info("Outbound fetch", {
      tenantId: context.tenantId,
      // The code writes the host too: only an allowed_hosts entry it matched is logged, never the host itself
      // (`http://<card number>.invalid/` put the number in the operator's logs; review of 27 Nov 2026).
      host: (context.allowedHosts && listedHost(url, context.allowedHosts)) ?? "(not in allowed_hosts)",
      method: request.method,
      status,
      bytesOut: request.body?.length ?? 0,
      bytesIn,
      ms: Math.round(performance.now() - started),
      ...(failure ? { failure } : {}),
    });
  try {
    const answer = await exchange(
      {
        url,
        hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: Number(url.port) || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
      },
      {
        tenantId: context.tenantId,
        allowPrivate: context.policy.allowPrivate,
        timeoutMs,
        signal: context.signal,
        receive: (bytes) => {
          bytesIn += bytes;
          context.budget.receive(bytes, url.origin);
        },
      },
    );
    log(answer.status);
    return {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.rawHeaders,
      body: answer.body,
    };
  } catch (error) {
    const failure = outboundError(error, url, timeoutMs);
    log(0, failure.type);
    throw failure;
  }
}

/** A failed exchange as the code sees it: no resolved address, no host path. */
function outboundError(error: unknown, url: URL, timeoutMs: number): OutboundError {
  if (error instanceof OutboundError) return error; // the run's bytes-in limit
  const failure = error instanceof ExchangeFailure ? error : classify(error);
  const to = `request to ${url.origin}`;
  switch (failure.kind) {
    case "refused":
      return new OutboundError(
        `${to} refused: the destination address is not allowed (private, loopback, ` +
          "link-local, metadata, reserved, or one of the service's own endpoints)",
        "refused",
      );
    case "timeout":
      return new OutboundError(`${to} timed out after ${timeoutMs} ms`, "request-timeout");
    case "aborted":
      return new OutboundError(`${to} was aborted`, "aborted");
    case "invalid":
      // Node refuses what it cannot send; readCodeRequest leaves nothing such, so this is a safety net.
      return new OutboundError(`${to} could not be sent`, "invalid");
    case "closed":
      return new OutboundError(`${to} failed: the connection closed early`, "system");
    default: {
      const known = failure.errno ? ` (${failure.errno})` : "";
      return new OutboundError(`${to} failed: the destination could not be reached${known}`, "system");
    }
  }
}
