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
 * Path suffixes are never normalized: a suffix holding a `.` or `..` segment (in any percent-encoded,
 * double-encoded, backslash or `;param` disguise) is refused, so the request cannot climb above
 * destination_url's path on any server, whatever its own normalization.
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import net from "node:net";
// Responses are parsed by Node's IncomingMessage: a destination's `__proto__` header line must not crash us.
import "#shared/http/safe-headers.ts";
import { AddressRefusedError, guardedAgents, isLocalAddress, isLocalName } from "./address-guard.ts";
import { outboundHeaders, responseHeaders } from "./headers.ts";

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

export const DEFAULT_TIMEOUT_MS = 25_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const SELF = "The destination is this service; a proxy cannot call itself.";
const FORBIDDEN =
  "The destination resolves to an address this service does not call (private, loopback, link-local, " +
  "metadata, reserved, or one of the service's own internal endpoints).";

/** An idle connection is closed after this long: below the 5 s keep-alive timeout of Node servers (and most others'), so a reused connection is rarely one the destination is closing. */
export const IDLE_CONNECTION_MS = 4_000;
/** Tenants whose connection pools are kept; beyond this the least recently used one is dropped. */
const MAX_POOLS = 256;

interface Pool {
  "http:": http.Agent;
  "https:": https.Agent;
  /** performance.now() of the last call's start or end. */
  lastActive: number;
}
const pools = new Map<string, Pool>();

/**
 * Connections are kept alive and reused, but only within one tenant: each tenant has its own agents, so
 * no socket or TLS session is ever shared between tenants' calls. Every new connection passes the
 * connect-time address check; a reused one passed it when it was opened, to the address it still uses.
 */
function poolOf(tenantId: string, allowPrivate: boolean): Pool {
  const key = `${allowPrivate ? "plain" : "filtered"}:${tenantId}`;
  const now = performance.now();
  let pool = pools.get(key);
  if (pool) pools.delete(key); // re-inserted below: the Map's order is least recently used first
  // Idle sockets close on a timer, but a frozen process (a Lambda between invocations) runs no timers: a
  // pool unused for longer than the idle limit may hold connections the destination has closed meanwhile,
  // and a POST must not be sent on one (it would fail, and is not retried). Such a pool is replaced.
  if (pool && now - pool.lastActive > IDLE_CONNECTION_MS) pool = undefined;
  if (!pool) {
    const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: "lifo" as const };
    // The address rule applies in both modes; allowPrivate only lifts the private-address part of it.
    pool = { ...guardedAgents(options, allowPrivate), lastActive: now };
  }
  pool.lastActive = now;
  pools.set(key, pool);
  // A dropped pool is not destroyed: requests in flight finish, then its idle sockets time out.
  if (pools.size > MAX_POOLS) pools.delete(pools.keys().next().value as string);
  return pool;
}

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

interface Target {
  url: URL & { protocol: "http:" | "https:" };
  /** For the socket: IPv6 without brackets. */
  hostname: string;
  port: number;
  /** Request target: destination path + suffix + query, exactly as sent. */
  path: string;
  /** The port is this service's and the name is not an IP literal: refuse local addresses after lookup. */
  guardLookup: boolean;
}

function resolveTarget(request: OutboundRequest, options: ForwardOptions): Target {
  let url: URL;
  try {
    url = new URL(request.destinationUrl);
  } catch {
    throw invalid("The destination_url is not an absolute URL.");
  }
  if (!isHttpUrl(url)) throw invalid("The destination_url must use http or https.");
  if (url.username || url.password) throw invalid("The destination_url must not carry credentials.");
  if (options.requireHttps && url.protocol !== "https:")
    throw new ForwardError(403, "forbidden_destination", "The destination_url must use https.");

  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const self = parseSelfHosts(options.selfHosts ?? []);
  const name = stripDot(url.hostname);
  if (self.some((entry) => entry.hostname === name && (entry.port === undefined || entry.port === port)))
    throw invalid(SELF);
  // An entry without a port stands for the default ports here: local mode always names its port.
  const selfPort = self.some((entry) =>
    entry.port === undefined ? port === 80 || port === 443 : entry.port === port,
  );
  if (options.allowPrivate && selfPort && isLocalName(hostname)) throw invalid(SELF);

  return {
    url,
    hostname,
    port,
    path: joinPath(url, request.pathSuffix, request.rawQuery),
    guardLookup: options.allowPrivate && selfPort && net.isIP(hostname) === 0,
  };
}

function isHttpUrl(url: URL): url is URL & { protocol: "http:" | "https:" } {
  return url.protocol === "http:" || url.protocol === "https:";
}

/** destination path (one trailing "/" removed) + suffix + "?" + query (merged with "&" into an existing one). */
function joinPath(url: URL, pathSuffix: string, rawQuery: string): string {
  const suffix = pathSuffix === "" || pathSuffix.startsWith("/") ? pathSuffix : `/${pathSuffix}`;
  if (hasDotSegment(suffix)) throw invalid("The path suffix must not contain '.' or '..' segments.");
  const base = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname;
  const path = `${base}${encodeUnsafe(suffix, /[?#]/)}` || "/";
  const query = [url.search.slice(1), encodeUnsafe(rawQuery, /#/)].filter((part) => part !== "").join("&");
  return query ? `${path}?${query}` : path;
}

/**
 * True when some segment, once percent-decoded (repeatedly, to see through double encoding) and split on
 * "/" and "\" (encoded slashes, Windows-style servers), is "." or ".." possibly followed by ";params".
 */
function hasDotSegment(suffix: string): boolean {
  for (const segment of suffix.split("/")) {
    let decoded = segment;
    for (let round = 0; round < 4; round++) {
      const next = decoded.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      );
      if (next === decoded) break;
      decoded = next;
    }
    for (const piece of decoded.split(/[/\\]/)) {
      const name = piece.split(";")[0];
      if (name === "." || name === "..") return true;
    }
  }
  return false;
}

/**
 * Percent-encode only what cannot appear raw in a request target (controls, space, non-ASCII, and the
 * delimiters in `special`); everything else, existing %XX escapes included, is passed byte for byte so
 * signatures over the path or query still hold.
 */
function encodeUnsafe(text: string, special: RegExp): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code > 0x20 && code < 0x7f && !special.test(char)) {
      out += char;
      continue;
    }
    try {
      out += encodeURIComponent(char);
    } catch {
      throw invalid("The path or query holds malformed text.");
    }
  }
  return out;
}

interface SelfHost {
  hostname: string;
  port: number | undefined;
}

/** Entries that are not host[:port] are skipped: no destination URL's host could match them anyway. */
function parseSelfHosts(entries: readonly string[]): SelfHost[] {
  const hosts: SelfHost[] = [];
  for (const entry of entries) {
    const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry.trim());
    if (!match?.[1]) continue;
    try {
      const { hostname } = new URL(`http://${match[1]}`); // same normalization as the destination's
      hosts.push({
        hostname: stripDot(hostname),
        port: match[2] === undefined ? undefined : Number(match[2]),
      });
    } catch {
      // not a host
    }
  }
  return hosts;
}

function stripDot(hostname: string): string {
  return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
}

class SelfDestinationError extends Error {}

// dns.lookup read at call time (not bound at import) so there is one resolution path, filtered or not.
const plainLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, options, callback);
};

/** A name that resolves to this machine on the service's own port is the service itself. */
const selfGuardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (addresses.some((entry) => isLocalAddress(entry.address)))
      return callback(new SelfDestinationError("resolves to this service"), []);
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first)
      return callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }),
        [],
      );
    callback(null, first.address, first.family);
  });
};

function invalid(message: string, cause?: unknown): ForwardError {
  return new ForwardError(400, "invalid_destination", message, cause === undefined ? undefined : { cause });
}

function tooLarge(maxBytes: number): ForwardError {
  return new ForwardError(502, "response_too_large", `The destination's response exceeds ${maxBytes} bytes.`);
}

/** Map a socket/agent failure to a ForwardError. Messages never echo addresses (no DNS oracle). */
function classify(error: unknown): ForwardError {
  if (error instanceof ForwardError) return error;
  if (error instanceof SelfDestinationError) return invalid(SELF, error);
  const message = error instanceof Error ? error.message : "";
  // address-guard's refusal, or request-filtering-agent's ("DNS lookup <ip>(…) is not allowed. Because …";
  // it sets no code): one answer for both, naming no address and not which rule refused it.
  if (error instanceof AddressRefusedError || /^DNS lookup .* is not allowed\. Because/s.test(message))
    return new ForwardError(403, "forbidden_destination", FORBIDDEN, { cause: error });
  if ((error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT")
    return new ForwardError(504, "timeout", "Connecting to the destination timed out.", { cause: error });
  return new ForwardError(502, "unreachable", "The destination could not be reached.", { cause: error });
}
