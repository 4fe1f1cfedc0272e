/**
 * Which headers cross the proxy, in each direction. Pure functions: no I/O, no Node objects.
 *
 * Outbound (caller → destination): everything except the service's own `svc-*` headers, hop-by-hop
 * headers (RFC 9110 §7.6.1, including any header the incoming Connection header names), `host` (set from the
 * destination) and `content-length` (recomputed from the body actually sent). SVC-PROXY-KEEP-ALIVE and
 * SVC-PROXY-CONNECTION become the outbound Keep-Alive and Connection when their values are well formed.
 *
 * Inbound (destination → caller): everything except hop-by-hop headers, `content-length` (the body is
 * re-framed by whoever sends it on) and `svc-*` (that namespace is the service's: a destination must not
 * be able to fake SVC-PROXY-DESTINATION-STATUS or any other service header).
 */
import { nullObject } from "#shared/domain/safe-keys.ts";

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

/** Headers to hand back to the caller, from the destination's response headers (Node's lower-cased form). */
export function responseHeaders(destination: IncomingHeaders): Record<string, string | string[]> {
  const connection = destination.connection;
  const nominated = connectionOptions(Array.isArray(connection) ? connection.join(",") : connection);
  const result = nullObject<string | string[]>();
  for (const [rawName, value] of Object.entries(destination)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    if (name.startsWith(SERVICE_PREFIX) || HOP_BY_HOP_HEADERS.has(name) || nominated.has(name)) continue;
    if (name === "content-length") continue;
    result[name] = Array.isArray(value) ? [...value] : value;
  }
  return result;
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
