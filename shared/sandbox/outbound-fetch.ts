/**
 * Carries out a tenant code's `fetch` in the host (the sandbox process has no network): through
 * address-guard.ts's agents (the connect-time address rule of proxies and callbacks), one connection pool per
 * tenant, redirects followed only after checking each hop again, within the run's limits. Each request is
 * logged with its host, method, status, bytes and time; never its URL path, headers or body.
 */
import http from "node:http";
import https from "node:https";
// Responses are parsed by Node's IncomingMessage: a destination's `__proto__` header line must not crash us.
import "#shared/http/safe-headers.ts";
import { logger } from "#shared/logger.ts";
import { AddressRefusedError, guardedAgents } from "#shared/proxy/address-guard.ts";
import {
  type CodeRequest,
  destinationRefusal,
  isRedirect,
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
    const answer = await exchange(request, timeoutMs, context);
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
function exchange(request: CodeRequest, timeoutMs: number, context: FetchContext): Promise<Exchange> {
  const { url } = request;
  const started = performance.now();
  const https_ = url.protocol === "https:";
  const pool = poolOf(context.tenantId, context.policy.allowPrivate);
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers)
    headers[name] = headers[name] ? `${headers[name]}, ${value}` : value;
  headers.host = url.host;
  headers.accept ??= "*/*";
  headers["user-agent"] ??= "svc-vault-fetch";
  if (request.body !== undefined) headers["content-length"] = String(request.body.length);
  let bytesIn = 0;
  let status: number | undefined;

  return new Promise<Exchange>((resolve, reject) => {
    let settled = false;
    const finish = (error: OutboundError | undefined, result?: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      context.signal.removeEventListener("abort", onAbort);
      if (error) req.destroy();
      else pool.lastActive = performance.now();
      logger.info("Outbound fetch", {
        tenantId: context.tenantId,
        host: url.host,
        method: request.method,
        status: status ?? 0,
        bytesOut: request.body?.length ?? 0,
        bytesIn,
        ms: Math.round(performance.now() - started),
        ...(error ? { failure: error.type } : {}),
      });
      if (error) reject(error);
      else resolve(result as Exchange);
    };
    const onAbort = () => finish(new OutboundError(`request to ${url.origin} was aborted`, "aborted"));
    const timer = setTimeout(
      () =>
        finish(
          new OutboundError(`request to ${url.origin} timed out after ${timeoutMs} ms`, "request-timeout"),
        ),
      timeoutMs,
    );
    let req: http.ClientRequest;
    try {
      req = (https_ ? https : http).request({
        protocol: url.protocol,
        hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (https_ ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        agent: https_ ? pool["https:"] : pool["http:"],
      });
    } catch {
      // Node refuses what it cannot send; readCodeRequest leaves nothing such, so this is a safety net.
      settled = true;
      clearTimeout(timer);
      reject(new OutboundError(`request to ${url.origin} could not be sent`, "invalid"));
      return;
    }
    if (context.signal.aborted) {
      onAbort();
      return;
    }
    context.signal.addEventListener("abort", onAbort);
    req.on("error", (error) => finish(classify(error, url)));
    req.on("response", (res) => {
      status = res.statusCode ?? 502;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => {
        bytesIn += chunk.length;
        try {
          context.budget.receive(chunk.length, url.origin);
          chunks.push(chunk);
        } catch (error) {
          finish(error as OutboundError);
        }
      });
      res.on("error", (error) => finish(classify(error, url)));
      res.on("close", () => {
        if (!res.complete)
          finish(new OutboundError(`request to ${url.origin} failed: the connection closed early`, "system"));
      });
      res.on("end", () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
          pairs.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
        finish(undefined, {
          status: res.statusCode ?? 502,
          statusText: res.statusMessage ?? "",
          headers: pairs,
          body: Buffer.concat(chunks),
        });
      });
    });
    req.end(request.body);
  });
}

/** A socket or agent failure as the code sees it: no resolved address, no host path. */
function classify(error: unknown, url: URL): OutboundError {
  if (error instanceof OutboundError) return error;
  const message = error instanceof Error ? error.message : "";
  // address-guard's refusal, or request-filtering-agent's ("DNS lookup <ip>(…) is not allowed. Because …").
  if (error instanceof AddressRefusedError || /^DNS lookup .* is not allowed\. Because/s.test(message))
    return new OutboundError(
      `request to ${url.origin} refused: the destination address is not allowed (private, loopback, ` +
        "link-local, metadata, reserved, or one of the service's own endpoints)",
      "refused",
    );
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const known = typeof code === "string" && /^E[A-Z_]+$/.test(code) ? ` (${code})` : "";
  return new OutboundError(
    `request to ${url.origin} failed: the destination could not be reached${known}`,
    "system",
  );
}

/** An idle connection closes after this long: below Node servers' 5 s keep-alive timeout. */
const IDLE_CONNECTION_MS = 4_000;
/** Tenants whose pools are kept; beyond this the least recently used one is dropped. */
const MAX_POOLS = 256;

interface Pool {
  "http:": http.Agent;
  "https:": https.Agent;
  lastActive: number;
}
const pools = new Map<string, Pool>();

/**
 * Connections are reused within one tenant only (no socket or TLS session crosses tenants). A pool idle for
 * longer than its sockets may live (a Lambda frozen between invocations runs no timers) is replaced, so a
 * request is never sent on a connection the destination has closed.
 */
function poolOf(tenantId: string, allowPrivate: boolean): Pool {
  const key = `${allowPrivate ? "plain" : "filtered"}:${tenantId}`;
  const now = performance.now();
  let pool = pools.get(key);
  if (pool) pools.delete(key); // re-inserted below: the Map's order is least recently used first
  if (pool && now - pool.lastActive > IDLE_CONNECTION_MS) pool = undefined;
  pool ??= {
    ...guardedAgents({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: "lifo" }, allowPrivate),
    lastActive: now,
  };
  pool.lastActive = now;
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) pools.delete(pools.keys().next().value as string);
  return pool;
}
