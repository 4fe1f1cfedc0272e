/**
 * Keys and property paths that come from requests. Three names reach the prototype machinery of a plain
 * JavaScript object instead of a member of it; none of them is ever accepted from a caller, anywhere
 * (body keys, query names, parameter names, expressions, JSONPaths). See docs/security.md.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "prototype", "constructor"]);

export const FORBIDDEN_KEY_MESSAGE = "must not be or contain __proto__, prototype or constructor";

export const isForbiddenKey = (key: string): boolean => FORBIDDEN_KEYS.has(key);

/** Whether a dotted path (`user.address.city`) has a forbidden segment. */
export const hasForbiddenSegment = (path: string): boolean => path.split(".").some(isForbiddenKey);

/**
 * Whether a piece of expression or JSONPath text names a forbidden key as a whole word, whichever way it is
 * spelt (`a.constructor`, `a["__proto__"]`, `$..prototype`). Deliberately broad: a word match, not a parse.
 */
const FORBIDDEN_WORD = /(?<![A-Za-z0-9_$])(?:__proto__|prototype|constructor)(?![A-Za-z0-9_$])/;
export const namesForbiddenKey = (text: string): boolean => FORBIDDEN_WORD.test(text);

/** An empty map with no prototype: writing any key into it only ever creates an own property. */
export const nullObject = <T = unknown>(): Record<string, T> => Object.create(null) as Record<string, T>;

/**
 * A header name no request or response may carry: writing it would reach Object.prototype. Every header line of
 * every HTTP message passes here (http/safe-headers.ts): only a name of its length is lower-cased, as lower-casing
 * never shortens a string.
 */
export function isForbiddenHeaderName(name: string): boolean {
  return name.length === 9 && name.toLowerCase() === "__proto__";
}
