/**
 * The outbound half of a proxy invocation: send an already-detokenized request to the proxy's destination
 * and return the destination's raw response (status, headers, body bytes unchanged).
 *
 * SSRF: every connection goes through address-guard.ts's agents, which check every address AT CONNECT
 * TIME (IP literals before a socket exists, names after their DNS lookup), so a name that resolves to a
 * refused address, or that re-binds to one between checks, is refused before any packet reaches it.
 * Link-local/metadata addresses and the service's internal endpoints (DynamoDB Local, the local API) are
 * refused always; private, loopback and reserved ones unless private destinations are allowed.
 *
 * Path suffixes are never normalized (request-path.ts); destinations that are this service are refused
 * (destination-target.ts, self-hosts.ts); connections are pooled per tenant (connection-pools.ts).
 */
import http from "node:http";
import https from "node:https";
// Responses are parsed by Node's IncomingMessage: a destination's `__proto__` header line must not crash us.
import "#shared/http/safe-headers.ts";
import { poolOf } from "./connection-pools.ts";
import { resolveTarget } from "./destination-target.ts";
import { classify, ForwardError, tooLarge } from "./forward-errors.ts";
import { outboundHeaders, responseHeaders } from "./headers.ts";
import { plainLookup, selfGuardedLookup } from "./self-hosts.ts";

// Callers of forward() catch what it throws from here.
export { ForwardError, type ForwardErrorCode } from "./forward-errors.ts";

export interface OutboundRequest {
  /** Whose request this is: connections are reused within one tenant only. */
  tenantId: string;
  /** The proxy's destination_url. */
  destinationUrl: string;
  /** What followed /proxy in the incoming path, still percent-encoded: "" or "/a/b". */
  pathSuffix: string;
  /** The incoming raw query string without the leading "?", already stripped of svc-proxy-key. */
  rawQuery: string;
  /** GET, POST, PUT, PATCH or DELETE. */
  method: string;
  /** Incoming headers (names lower-cased); filtered by outboundHeaders before sending. */
  headers: Record<string, string>;
  /** Already detokenized/transformed bytes; undefined for none. */
  body?: Buffer;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

export interface ForwardOptions {
  /** SVC_PROXY_ALLOW_PRIVATE: reach loopback/private addresses (local mode). */
  allowPrivate: boolean;
  /** Only https destinations (AWS mode). */
  requireHttps: boolean;
  /** Whole exchange, connect to last body byte. Default 25 000. */
  timeoutMs?: number;
  /**
   * host[:port] of this service: the proxy never calls itself. An entry without a port matches that host on
   * any port. With allowPrivate, a loopback/local destination on one of these ports (80 and 443 for an entry
   * without a port) is refused too, also when a name only resolves to such an address.
   */
  selfHosts?: string[];
  /** Default 10 MB. */
  maxResponseBytes?: number;
}

export const DEFAULT_TIMEOUT_MS = 25_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

export async function forward(request: OutboundRequest, options: ForwardOptions): Promise<OutboundResponse> {
  const method = request.method.toUpperCase();
  if (!METHODS.has(method)) throw new TypeError(`forward: unsupported method ${request.method}`);
  const target = resolveTarget(request, options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const headers = outboundHeaders(request.headers);
  headers.host = target.url.host;
  if (request.body !== undefined) headers["content-length"] = String(request.body.length);

  const client = target.url.protocol === "https:" ? https : http;
  const pool = poolOf(request.tenantId, options.allowPrivate);
  const agent = pool[target.url.protocol];

  return new Promise<OutboundResponse>((resolve, reject) => {
    let req: http.ClientRequest;
    try {
      req = client.request({
        protocol: target.url.protocol,
        hostname: target.hostname,
        port: target.port,
        path: target.path,
        method,
        headers,
        agent,
        lookup: target.guardLookup ? selfGuardedLookup : plainLookup,
      });
    } catch (error) {
      // Node refuses a header, path or method it cannot send; the checks above leave none, so this is a bug.
      reject(error);
      return;
    }
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(classify(error));
    };
    // One deadline for the whole exchange: connect, send, response headers and every body byte.
    const timer = setTimeout(
      () => fail(new ForwardError(504, "timeout", `The destination did not answer within ${timeoutMs} ms.`)),
      timeoutMs,
    );
    req.on("error", fail);
    req.on("response", (res) => {
      const declared = Number(res.headers["content-length"]);
      if (declared > maxBytes) {
        res.resume();
        fail(tooLarge(maxBytes));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) fail(tooLarge(maxBytes));
        else chunks.push(chunk);
      });
      res.on("error", fail);
      res.on("close", () => {
        if (!res.complete)
          fail(new ForwardError(502, "unreachable", "The destination closed the connection."));
      });
      res.on("end", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        pool.lastActive = performance.now(); // its socket is free again from now
        resolve({
          status: res.statusCode ?? 502,
          headers: responseHeaders(res.headers),
          body: Buffer.concat(chunks, size),
        });
      });
    });
    req.end(request.body);
  });
}
