/**
 * The commonest expressions are a plain path into the data: `{{ data.number }}` (the card fingerprint),
 * `{{ data.expiration_month }}` (the card mask). Reading such a path takes well under a microsecond; rendering
 * it through liquidjs builds a Context and walks its render machinery, and a request's render also waits for
 * the render slot and reads the CPU meter. So a plain path is read here directly, in the cases where that is
 * exactly what liquidjs answers (test/unit/plain-path.test.ts holds the two together), and liquidjs renders
 * every other case.
 *
 * The same holds for a plain path through a few of the vault's own string filters with literal arguments
 * (`{{ data.number | reveal_last: 4 }}`, the card mask): the filter is the one liquidjs would call, applied to
 * the same value, when the work is a few microseconds: what one call (or one mask) filters uncharged is bounded
 * by MAX_DIRECT_WORK. Anything else (more work, a filter that fails, answers no string, or would charge memory)
 * is left to liquidjs, which gives its own answer or error, charged to the render budget.
 */
import type { FilterBudget } from "./expression-filters.ts";

/** Names liquidjs reads as literals or special properties: never a plain lookup. */
const LITERALS = new Set(["true", "false", "nil", "null", "empty", "blank"]);
const SPECIAL = new Set(["size", "first", "last"]);
const PLAIN_OUTPUT = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}$/;
/** The same dotted path, followed by the output's first filter. */
const FILTERED_OUTPUT = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\|/;

/**
 * Most names a path read directly may have: as deep as a request body nests (MAX_JSON_DEPTH). Each name is a step
 * of readPlainPath, uncharged and outside MAX_DIRECT_WORK: a mask of 16 paths of 1,000 names each (32 KiB) over
 * data nested as deep (a reactor's tokenize block is not held to the body's depth) read 16,000 steps a token,
 * about 0.8 ms, 80 ms for a page of 100 tokens, none of it charged (review s54). A longer path is liquidjs's.
 */
export const MAX_DIRECT_PATH_NAMES = 64;

function pathOf(dotted: string | undefined): readonly string[] | undefined {
  if (!dotted) return undefined;
  const path = dotted.split(".");
  if (path.length > MAX_DIRECT_PATH_NAMES) return undefined;
  if (LITERALS.has(path[0] as string) || path.some((name) => SPECIAL.has(name))) return undefined;
  return path;
}

/** The path of a template that is one output tag of a dotted path and nothing else, or undefined. */
export function plainPathOf(template: string): readonly string[] | undefined {
  return pathOf(PLAIN_OUTPUT.exec(template)?.[1]);
}

/**
 * The path a one-output template starts with when a filter follows it directly (`{{ data.number | last4 }}`);
 * the caller checks the filters themselves (from liquidjs's parse of the same template).
 */
export function filteredPathOf(template: string): readonly string[] | undefined {
  return pathOf(FILTERED_OUTPUT.exec(template)?.[1]);
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

/** One filter of a direct read: the vault filter's own function and its literal arguments. */
export interface DirectStep {
  apply(budget: FilterBudget, input: unknown, args: unknown[]): unknown;
  args: readonly unknown[];
}

/** Longest value a direct read filters; a longer one is rendered by liquidjs, in a turn of the render slot. */
export const DIRECT_INPUT_CHARS = 256;

/**
 * Most work the direct reads of one uncharged evaluation (one render or evaluate call, or one whole mask) may do,
 * in units of (the value's length + 1) × the filters applied to it: about 70 ns a unit (160 for card_mask), so at
 * most 10–20 µs, no more than the render slot's turn and meter readings it saves. The card mask's number (16–19
 * digits through one filter: 17–20 units) fits, and so do three such strings through two filters each (120). More
 * is rendered in a charged turn: 16 strings of 256 characters through 4 filters each, uncharged and read twice,
 * cost about 2 ms a token, 280 ms for the 100 tokens of one request, none of it charged (review s53).
 */
export const MAX_DIRECT_WORK = 128;

/** The work direct reads may still do uncharged (MAX_DIRECT_WORK units at first; Infinity in a charged turn). */
export interface DirectWork {
  left: number;
}

class Allocates extends Error {}
/** A filter that charges memory is left to liquidjs, whose render charges it. */
const NO_ALLOCATION: FilterBudget = {
  use() {
    throw new Allocates();
  },
};

/**
 * The string `steps` make of the value at `path` (as readPlainPath finds it), or undefined: the value is missing
 * or longer than DIRECT_INPUT_CHARS, its work is more than `work` has left (which it is charged otherwise), or a
 * filter throws or answers anything but a string. liquidjs then renders the template, and answers (or fails) as
 * it always does.
 */
export function readFilteredPath(
  scope: Record<string, unknown>,
  path: readonly string[],
  steps: readonly DirectStep[],
  work: DirectWork,
): string | undefined {
  const value = readPlainPath(scope, path);
  if (value === undefined) return undefined;
  const chars = typeof value === "string" ? value.length : String(value).length;
  const units = (chars + 1) * steps.length;
  if (chars > DIRECT_INPUT_CHARS || units > work.left) return undefined;
  work.left -= units;
  let current: unknown = value;
  try {
    for (const step of steps) {
      current = step.apply(NO_ALLOCATION, current, [...step.args]);
      if (typeof current !== "string") return undefined;
    }
  } catch {
    return undefined;
  }
  return current as string;
}
