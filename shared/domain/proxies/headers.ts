/**
 * Which headers cross the proxy, in each direction. Pure functions: no I/O, no Node objects.
 *
 * Outbound (caller → destination): everything except the service's own `svc-*` headers, hop-by-hop
 * headers (RFC 9110 §7.6.1, including any header the incoming Connection header names), `host` (set from the
 * destination) and `content-length` (recomputed from the body actually sent). SVC-PROXY-KEEP-ALIVE and
 * SVC-PROXY-CONNECTION become the outbound Keep-Alive and Connection when their values are well formed.
 *
 * Inbound (destination or tenant code → caller): everything except hop-by-hop headers (any `proxy-*` too),
 * `content-length` (the body is re-framed by whoever sends it on), `set-cookie` (the answer comes from the
 * vault's own origin: a destination's or a formula's cookie would be set for it, reaching every later request of
 * the caller's browser to the vault), `access-control-*` (which origins may read the vault's answers is the vault's
CORS policy, shared/http/middleware/cors.ts, never a destination's or a formula's) and `svc-*` (that namespace is the service's: a destination must not be
 * able to fake SVC-PROXY-DESTINATION-STATUS or any other service header). One filter, `responseHeaders`, for
 * every such answer: a proxy's destination, a response transform, a reactor's CustomHttpResponseError.
 */
import { isForbiddenHeaderName, nullObject } from "#shared/domain/safe-keys.ts";

export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "proxy-authorization",
  "proxy-authenticate",
]);

/**
 * Never answered from a destination or tenant code: they would set state on the vault's own origin, or (CORP)
 * let other sites' pages load the answer as a script or image from it (security-headers.ts sets `same-origin`).
 */
const ORIGIN_STATE_HEADERS: ReadonlySet<string> = new Set([
  "set-cookie",
  "set-cookie2",
  "cross-origin-resource-policy",
]);
/** Proxy-Authenticate, Proxy-Authorization, Proxy-Connection and any other: meant for the next proxy only. */
const PROXY_PREFIX = "proxy-";
const CORS_PREFIX = "access-control-";

const SERVICE_PREFIX = "svc-";
const INJECT_CONNECTION = "svc-proxy-connection";
const INJECT_KEEP_ALIVE = "svc-proxy-keep-alive";

/** RFC 9110 §5.6.2 token (header names, Connection options). */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Keep-Alive parameters, e.g. `timeout=5, max=100` (RFC 2068 keep-alive-info without quoted strings). */
const KEEP_ALIVE =
  /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(=[!#$%&'*+\-.^_`|~0-9A-Za-z]+)?( *, *[!#$%&'*+\-.^_`|~0-9A-Za-z]+(=[!#$%&'*+\-.^_`|~0-9A-Za-z]+)?)*$/;
/** What Node's http client accepts in a header value (it throws on anything else, CR and LF included). */
export const SAFE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const MAX_INJECTED_LENGTH = 128;

export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Headers to send to the destination, from the caller's (already detokenized/transformed) headers. */
export function outboundHeaders(incoming: IncomingHeaders): Record<string, string> {
  const headers = normalize(incoming);
  const nominated = connectionOptions(headers.connection);
  const result = nullObject<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(SERVICE_PREFIX) || HOP_BY_HOP_HEADERS.has(name) || nominated.has(name)) continue;
    if (name === "host" || name === "content-length") continue;
    if (!TOKEN.test(name) || !SAFE_VALUE.test(value)) continue;
    result[name] = value;
  }
  const connection = injectedValue(headers[INJECT_CONNECTION], TOKEN);
  if (connection !== undefined) result.connection = connection;
  const keepAlive = injectedValue(headers[INJECT_KEEP_ALIVE], KEEP_ALIVE);
  if (keepAlive !== undefined) result["keep-alive"] = keepAlive;
  return result;
}

/**
 * What tenant code (a request transform) may see of the caller's headers: everything but the service's own
 * `svc-*` headers, which carry the API key, the proxy key and options meant for the service alone.
 */
export function transformVisibleHeaders(incoming: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(incoming).filter(([name]) => !name.toLowerCase().startsWith(SERVICE_PREFIX)),
  );
}

/** The caller's SVC-PROXY-CONNECTION and SVC-PROXY-KEEP-ALIVE, kept aside for outboundHeaders. */
export function proxyOptionHeaders(incoming: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(incoming)
      .map(([name, value]) => [name.toLowerCase(), value] as const)
      .filter(([name]) => name === INJECT_CONNECTION || name === INJECT_KEEP_ALIVE),
  );
}

/**
 * Headers to hand back to the caller, from a destination's response headers (Node's lower-cased form) or
 * from what tenant code answered (after headersFromCode): the one inbound filter (see the file comment).
 */
export function responseHeaders(destination: IncomingHeaders): Record<string, string | string[]> {
  const connection = Object.entries(destination)
    .filter(([name, value]) => name.toLowerCase() === "connection" && value !== undefined)
    .flatMap(([, value]) => [value as string | string[]].flat());
  const nominated = connectionOptions(connection.join(","));
  const result = nullObject<string | string[]>();
  for (const [rawName, value] of Object.entries(destination)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (
      name.startsWith(SERVICE_PREFIX) ||
      name.startsWith(PROXY_PREFIX) ||
      name.startsWith(CORS_PREFIX) ||
      ORIGIN_STATE_HEADERS.has(name)
    )
      continue;
    if (HOP_BY_HOP_HEADERS.has(name) || nominated.has(name) || name === "content-length") continue;
    result[name] = Array.isArray(value) ? [...value] : value;
  }
  return result;
}

/**
 * The most header bytes (names and values) tenant code may set on one message: what Node accepts of a peer's
 * headers (`--max-http-header-size`). A transform's 1.5 MB of headers beside a 4 MiB body made a function result
 * past Lambda's 6 MB (review round 7); no destination or browser takes more anyway.
 */
export const MAX_CODE_HEADER_BYTES = 16 * 1024;

/**
 * The headers tenant code returned (a transform's `headers`, a CustomHttpResponseError's: any value), on a
 * null-prototype map. Dropped: names that are not `names` (default: any RFC 9110 token), `__proto__` (no
 * protocol has it, and an ordinary object the answer later passes through cannot hold it), values Node cannot
 * send (CR, LF, …), null/undefined values, and every header from the one that passes MAX_CODE_HEADER_BYTES on.
 * Answers to a caller then pass responseHeaders as well.
 */
export function headersFromCode(value: unknown, names: RegExp = TOKEN): Record<string, string> {
  const headers = nullObject<string>();
  if (typeof value !== "object" || value === null || Array.isArray(value)) return headers;
  let bytes = 0;
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!names.test(name) || isForbiddenHeaderName(name) || raw === undefined || raw === null) continue;
    const text = String(raw);
    if (!SAFE_VALUE.test(text)) continue;
    bytes += name.length + Buffer.byteLength(text, "utf8");
    if (bytes > MAX_CODE_HEADER_BYTES) break;
    headers[name] = text;
  }
  return headers;
}

/** What tenant code answers a caller with (a CustomHttpResponseError's `headers`): headersFromCode, then the filter. */
export function codeAnswerHeaders(value: unknown): Record<string, string> {
  // Every value is a string: headersFromCode makes them so, and responseHeaders copies them as they are.
  return responseHeaders(headersFromCode(value)) as Record<string, string>;
}

/** Lower-cased names; repeated fields (as arrays or differently-cased names) joined with ", " (RFC 9110 §5.3). */
function normalize(incoming: IncomingHeaders): Record<string, string> {
  // Names come from callers and destinations: a null-prototype map, so `__proto__` is an ordinary name.
  const headers = nullObject<string>();
  for (const [rawName, rawValue] of Object.entries(incoming)) {
    if (rawValue === undefined) continue;
    const name = rawName.toLowerCase();
    const value = Array.isArray(rawValue) ? rawValue.join(", ") : rawValue;
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  }
  return headers;
}

/** Header names listed in a Connection header: they are hop-by-hop too. */
function connectionOptions(connection: string | undefined): Set<string> {
  const names = new Set<string>();
  for (const option of connection?.split(",") ?? []) {
    const name = option.trim().toLowerCase();
    if (name) names.add(name);
  }
  return names;
}

function injectedValue(value: string | undefined, shape: RegExp): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed.length <= MAX_INJECTED_LENGTH && shape.test(trimmed) ? trimmed : undefined;
}
