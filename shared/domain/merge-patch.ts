import { isForbiddenKey, nullObject } from "./safe-keys.ts";

/**
 * RFC 7386 JSON merge patch: objects merge recursively, null removes a member, anything else replaces.
 * Patches come from callers, so objects are built on null prototypes (a key only ever becomes an own
 * property), members are read only when they are own, and `__proto__`, `prototype` and `constructor` are
 * refused (the HTTP edge already answers 400 for them; this is the second line).
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = nullObject();
  if (isPlainObject(target)) for (const [key, value] of Object.entries(target)) result[key] = value;
  for (const [key, value] of Object.entries(patch)) {
    if (isForbiddenKey(key)) throw new TypeError("merge patch: reserved key");
    if (value === null) delete result[key];
    else result[key] = mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value);
  }
  return result;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
