/**
 * One outbound request and its whole answer, the loop every egress shares (proxies, callbacks, tenant code's
 * fetch): through the tenant's pooled, address-guarded agents (pools.ts), cut at one deadline for the whole
 * exchange (connect, send, headers, every body byte), at a byte limit or at the caller's signal. Failures
 * reject as an ExchangeFailure (errors.ts), or as whatever the caller's `receive` hook threw.
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
// Responses are parsed by Node's IncomingMessage: a destination's `__proto__` header line must not crash us.
import "#shared/http/safe-headers.ts";
import { classify, ExchangeFailure } from "./errors.ts";
import { poolOf } from "./pools.ts";

export interface ExchangeRequest {
  url: URL;
  /** For the socket: IPv6 without brackets. */
  hostname: string;
  port: number;
  /** Request target: path and query, exactly as sent. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** How names are resolved (the connect-time address rule applies on top, in the agents). */
  lookup?: LookupFunction;
}

export interface ExchangeLimits {
  tenantId: string;
  allowPrivate: boolean;
  timeoutMs: number;
  /** A larger answer (declared or received) fails as too-large. */
  maxBytes?: number;
  /** Called with each body chunk's size; what it throws fails the exchange as is. */
  receive?: (bytes: number) => void;
  signal?: AbortSignal;
}

export interface ExchangeAnswer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** Name/value pairs as received, names lower-cased. */
  rawHeaders: [string, string][];
  body: Buffer;
}

export function exchange(request: ExchangeRequest, limits: ExchangeLimits): Promise<ExchangeAnswer> {
  const https_ = request.url.protocol === "https:";
  const pool = poolOf(limits.tenantId, limits.allowPrivate);
  const maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;

  return new Promise<ExchangeAnswer>((resolve, reject) => {
    let settled = false;
    /** `error`: an ExchangeFailure, or what the caller's hook threw. */
    const finish = (error: unknown, answer?: ExchangeAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.signal?.removeEventListener("abort", onAbort);
      if (answer) {
        pool.lastActive = performance.now(); // its socket is free again from now
        resolve(answer);
      } else {
        req?.destroy();
        reject(error);
      }
    };
    const onAbort = () => finish(new ExchangeFailure("aborted"));
    const timer = setTimeout(() => finish(new ExchangeFailure("timeout")), limits.timeoutMs);
    let req: http.ClientRequest | undefined;
    try {
      req = (https_ ? https : http).request({
        protocol: request.url.protocol,
        hostname: request.hostname,
        port: request.port,
        path: request.path,
        method: request.method,
        headers: request.headers,
        agent: https_ ? pool["https:"] : pool["http:"],
        ...(request.lookup ? { lookup: request.lookup } : {}),
      });
    } catch (error) {
      // Node refuses a header, path or method it cannot send; callers' checks leave none, so this is a safety net.
      finish(new ExchangeFailure("invalid", { cause: error }));
      return;
    }
    if (limits.signal?.aborted) return onAbort();
    limits.signal?.addEventListener("abort", onAbort);
    req.on("error", (error) => finish(classify(error)));
    req.on("response", (res) => {
      if (Number(res.headers["content-length"]) > maxBytes) {
        res.resume();
        return finish(new ExchangeFailure("too-large"));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        try {
          limits.receive?.(chunk.length);
          if (size > maxBytes) throw new ExchangeFailure("too-large");
          chunks.push(chunk);
        } catch (error) {
          finish(error);
        }
      });
      res.on("error", (error) => finish(classify(error)));
      res.on("close", () => {
        if (!res.complete) finish(new ExchangeFailure("closed"));
      });
      res.on("end", () =>
        finish(undefined, {
          status: res.statusCode ?? 502,
          statusText: res.statusMessage ?? "",
          headers: res.headers,
          rawHeaders: pairs(res.rawHeaders),
          body: Buffer.concat(chunks, size),
        }),
      );
    });
    req.end(request.body);
  });
}

function pairs(raw: string[]): [string, string][] {
  const result: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    result.push([(raw[i] as string).toLowerCase(), raw[i + 1] as string]);
  return result;
}
