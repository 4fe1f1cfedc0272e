/**
 * The commonest expressions are a plain path into the data: `{{ data.number }}` (the card fingerprint),
 * `{{ data.expiration_month }}` (the card mask). Reading such a path takes well under a microsecond; rendering
 * it through liquidjs builds a Context and walks its render machinery, and a request's render also waits for
 * the render slot and reads the CPU meter. So a plain path is read here directly, in the cases where that is
 * exactly what liquidjs answers (test/unit/plain-path.test.ts holds the two together), and liquidjs renders
 * every other case.
 */

/** Names liquidjs reads as literals or special properties: never a plain lookup. */
const LITERALS = new Set(["true", "false", "nil", "null", "empty", "blank"]);
const SPECIAL = new Set(["size", "first", "last"]);
const PLAIN_OUTPUT = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}$/;

/** The path of a template that is one output tag of a dotted path and nothing else, or undefined. */
export function plainPathOf(template: string): readonly string[] | undefined {
  const match = PLAIN_OUTPUT.exec(template);
  if (!match?.[1]) return undefined;
  const path = match[1].split(".");
  if (LITERALS.has(path[0] as string) || path.some((name) => SPECIAL.has(name))) return undefined;
  return path;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The string, number or boolean at `path` in `scope` (JSON data), reached through own properties of plain
 * objects only; undefined when the path leads anywhere else (missing, null, an array, an object): the caller
 * renders through liquidjs then, so every unusual case keeps liquidjs's answer.
 */
export function readPlainPath(
  scope: Record<string, unknown>,
  path: readonly string[],
): string | number | boolean | undefined {
  let current: unknown = scope;
  for (const name of path) {
    if (!isRecord(current) || !Object.hasOwn(current, name)) return undefined;
    current = current[name];
  }
  return typeof current === "string" || typeof current === "number" || typeof current === "boolean"
    ? current
    : undefined;
}
