/**
 * Checks on a JSON request body before anything walks it: how deep it nests and which keys it uses.
 * Both checks loop over an explicit stack (never recursion), so no body can overflow the call stack here,
 * and both run before zod or any domain code sees the value.
 */
import { isForbiddenKey } from "#shared/domain/safe-keys.ts";

/** Deepest nesting of objects and arrays a request body may have; the body itself is level 1. */
export const MAX_JSON_DEPTH = 64;

/**
 * The nesting depth of JSON text, counted on the raw characters (brackets outside strings), so a hostile
 * body is refused before it is even parsed. Returns early once `limit` is passed.
 */
export function jsonTextDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** What is wrong with a parsed body, at which path (`args.__proto__`, `data.amount`). */
export type BodyProblem = { path: string; kind: "reserved-key" | "non-finite-number" | "inexact-number" };

/**
 * The first object key in `value` that is `__proto__`, `prototype` or `constructor`, or number too large for a
 * double (`1e400` parses as Infinity, which JSON.stringify would store as null: another value than was sent), or
 * one of 2^53 or more in magnitude (I-JSON's interoperable range, RFC 7493: JSON.parse rounds a 19-digit account
 * number to another integer, which would be sealed as the token's data: refused since 28 Nov 2026), or undefined
 * when there is none. Depth-first over an explicit stack.
 */
export function bodyProblem(value: unknown): BodyProblem | undefined {
  const stack: { node: unknown; path: string[] }[] = [{ node: value, path: [] }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { node, path } = next;
    if (typeof node === "number" && !Number.isFinite(node))
      return { path: path.join(".") || "body", kind: "non-finite-number" };
    if (typeof node === "number" && Math.abs(node) > Number.MAX_SAFE_INTEGER)
      return { path: path.join(".") || "body", kind: "inexact-number" };
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        stack.push({ node: item, path: [...path, String(index)] });
      });
      continue;
    }
    for (const key of Object.keys(node)) {
      if (isForbiddenKey(key)) return { path: [...path, key].join("."), kind: "reserved-key" };
      stack.push({ node: (node as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return undefined;
}

/** The path of the first reserved key (`__proto__`, `prototype`, `constructor`) in `value`, if any. */
export function forbiddenKeyPath(value: unknown): string | undefined {
  const problem = bodyProblem(value);
  return problem?.kind === "reserved-key" ? problem.path : undefined;
}
