import type { TenantPrincipal } from "./entities.ts";

/**
 * A host: a DNS name (letters, digits, hyphens, underscores, dots; IDNs as punycode, as URL gives them), an IPv4
 * address, or a bracketed IPv6 address.
 */
const HOST =
  /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*|\[[0-9a-f:.]+\])$/;

/** Most origins an application lists: the frame page's CSP header and every check stay small. */
export const MAX_ALLOWED_ORIGINS = 20;

/**
 * A web origin exactly as a browser sends it in `Origin`: `scheme://host[:port]`, http or https, lower case,
 * no path, query, fragment, credentials or wildcard, and no default port (a browser never sends `:443` on
 * https). Returns the reason it is not one, or undefined when it is.
 */
export function originError(value: string): string | undefined {
  if (value.includes("*")) return "must not hold a wildcard";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be scheme://host[:port]";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use http or https";
  if (url.username || url.password) return "must not hold credentials";
  // URL normalises (lower-cases the host, drops a default port, adds "/"): the value must already be that form.
  if (url.origin !== value) return "must be exactly scheme://host[:port] in lower case, without a path";
  // The WHATWG parser lets `"`, `;`, `'`, `,`, `{` and the like through in a host: an origin goes into a CSP
  // header and an HTML attribute, where they would end the value. A host is a DNS name (punycode for IDNs), an
  // IPv4 address or a bracketed IPv6 address.
  if (!HOST.test(url.hostname)) return "must have a DNS name or an IP address as its host";
  return undefined;
}

/**
 * The origins a key's browser calls may come from: its application's, and for a session key the application
 * that created the session (the one whose page holds it), whichever application later authorized it.
 */
export function allowedOriginsOf(principal: TenantPrincipal): readonly string[] {
  if (principal.kind === "session") return principal.creator.allowed_origins ?? [];
  return principal.application.allowed_origins ?? [];
}

/** Exact, case-sensitive match (both sides are canonical origins; anything else never matches). */
export function isOriginAllowed(principal: TenantPrincipal, origin: string): boolean {
  return allowedOriginsOf(principal).includes(origin);
}
