import { nullObject } from "#shared/domain/safe-keys.ts";

/**
 * Set on every answer of the API, replacing any header of the same name (in any case) a handler or a proxy
 * destination set: answers are served from the vault's own origin, so a destination (or a tenant who controls
 * one) answering text/html with a script must not get it run there, nor have a browser sniff a harmless-looking
 * type into HTML. `sandbox` makes a browser render the answer in a unique origin with scripts, forms and plugins
 * disabled; the API's own JSON answers lose nothing by it.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "sandbox",
};

const SECURITY_HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

/**
 * Names the API's own answers carry (JSON results, CORS, errors, rate limits, idempotent replays, the request id,
 * and what is set here), as they set them. Headers of only these names are collected in an ordinary object: the
 * few orders they come in give it a few fixed shapes, which V8 keeps fast. Any other name (a proxy destination's,
 * a transform's) gets a null-prototype map, where `__proto__` is an ordinary key and no name makes a new shape.
 * A map is a hash table from the start: for a read's eight headers, about a tenth of the framework's time.
 */
const OWN_ANSWER_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "vary",
  "access-control-allow-origin",
  "access-control-expose-headers",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-max-age",
  "allow",
  "retry-after",
  "svc-request-id",
  "svc-idempotent-replayed",
  "cache-control",
  "cross-origin-resource-policy",
  ...Object.keys(SECURITY_HEADERS),
]);

/** An empty header collection for `headers`' names: ordinary for the API's own (above), else a null-prototype map. */
export function headerCollection<T>(
  headers: Readonly<Record<string, unknown>> | undefined,
): Record<string, T> {
  if (headers)
    for (const name of Object.keys(headers)) if (!OWN_ANSWER_HEADERS.has(name)) return nullObject<T>();
  return {};
}

/**
 * `headers` without any header named in SECURITY_HEADERS (in any case), then those set. `ownPolicy`: the
 * route's own handler set the Content-Security-Policy (the Elements frame page, never a proxied answer), kept.
 * An answer without a Cross-Origin-Resource-Policy of its handler's is `same-origin`. An answer that says nothing
 * of caching is `no-store`: answers hold token data and keys, and neither a browser's
 * disk cache nor a shared cache keyed on the URL alone (SVC-API-KEY is no `Authorization` to it) may keep them.
 * A handler's own choice (the Elements scripts are public) and a proxy destination's are kept.
 */
export function withSecurityHeaders(
  headers: Record<string, string | number | boolean> | undefined,
  options: { ownPolicy?: boolean } = {},
): Record<string, string | number | boolean> {
  // A header named `__proto__` (from a destination or a transform) stays an ordinary entry (headerCollection).
  const result = headerCollection<string | number | boolean>(headers);
  let ownPolicy: string | number | boolean | undefined;
  let caching = false;
  let resourcePolicy = false;
  if (headers)
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase();
      const value = headers[name] as string | number | boolean;
      caching ||= lower === "cache-control";
      resourcePolicy ||= lower === "cross-origin-resource-policy";
      if (options.ownPolicy && lower === "content-security-policy") ownPolicy = value;
      else if (!Object.hasOwn(SECURITY_HEADERS, lower)) result[name] = value;
    }
  for (const [name, value] of SECURITY_HEADER_ENTRIES) result[name] = value;
  if (!caching) result["cache-control"] = "no-store";
  // No other site's page loads an answer as a script, style or image (no-cors): an open proxy's destination
  // answering text/javascript ran on a merchant page whose CSP allowed the vault's origin for elements.js (front-end
  // review, 28 Nov 2026). CORS requests and frames are not concerned; elements.js sets its own `cross-origin`, and
  // a destination's or tenant code's is dropped on the way (proxies/headers.ts).
  if (!resourcePolicy) result["cross-origin-resource-policy"] = "same-origin";
  if (ownPolicy !== undefined) result["content-security-policy"] = ownPolicy;
  return result;
}
