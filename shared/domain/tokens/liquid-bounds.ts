/**
 * What keeps one liquidjs render from holding the process (docs/expressions.md, "Render budgets"): liquidjs does
 * work inside a single step (a filter call, a comparison, a coercion of a tag's argument) that no render limit
 * interrupts, so every such step is bounded by what it is given. Here: the bound on a filter's input and
 * arguments, the one wrapper every filter passes (guardFilter), the arguments that are code, the comparisons,
 * the property reads (BoundedContext), liquidjs's n·log n filters done in fewer steps, and the render limit that
 * asks the render's budget. The engine (expressions.ts) registers them.
 */
import { Context, defaultOperators, type FilterImplOptions, type Operators, toValue } from "liquidjs";
import { ExpressionError } from "./expression-filters.ts";
import { type Overdue, TIME_LIMIT } from "./render-budget.ts";

/**
 * Most a filter's input and arguments may hold, counted with every copy of a value held at several places and a
 * string as one per character. A filter's work (sort, uniq, join, stringify, ...) cannot be interrupted, and
 * liquidjs's `push`/`concat` copy references, so a few kilobytes of template-built arrays stood for gigabytes of
 * work: 330 `push`es of a 12,000-item array then `sort` held the process 4 s (review of 27 Nov 2026). Token data
 * never comes near this (its own size limit).
 */
export const MAX_FILTER_INPUT_UNITS = 100_000;

/**
 * Whether `values`, counted as MAX_FILTER_INPUT_UNITS counts, hold more than `limit` (stops once past it). A
 * string counts one per character: filters and liquidjs's coercions work per character (escaping, slugs, digits
 * replaced one by one, arrays joined into strings), and at one unit per kilobyte, then per 64 characters, a
 * template built 6 to 67 M characters within the bound and one filter call took up to 1.4 s (reviews of 27 Nov
 * 2026). Token data (at most 64 KB) fits.
 */
export function overInputLimit(values: unknown[], limit = MAX_FILTER_INPUT_UNITS): boolean {
  let units = 0;
  const pending = [...values];
  while (pending.length > 0) {
    const value = pending.pop();
    units += typeof value === "string" ? 1 + value.length : 1;
    if (units > limit) return true;
    if (value !== null && typeof value === "object")
      for (const inner of Array.isArray(value) ? value : Object.values(value)) pending.push(inner);
  }
  return false;
}

/** Passed to a render limit's check before a step that may cost much: the meter is read then, not every 16th time. */
export const READ_METER_NOW = "read the meter now";
/** An array this long read from the scope may be turned into a string by liquidjs (a range's bound, a tag's limit). */
const LARGE_VALUE_UNITS = 10_000;
/** Values found large, or not: liquidjs's filters make new arrays and objects, never change one. */
const largeness = new WeakMap<object, boolean>();
function isLarge(value: object): boolean {
  let large = largeness.get(value);
  if (large === undefined) {
    large = overInputLimit([value], LARGE_VALUE_UNITS);
    largeness.set(value, large);
  }
  return large;
}

/**
 * liquidjs's render limit, checked at every template, filter and array item: here it asks the render's budget
 * (liquidjs passes performance.now(), which is not used: the budget has its own meter).
 */
export function budgetLimiter(overdue: Overdue): Context["renderLimit"] {
  const limiter = {
    check: (asked?: unknown) => {
      if (overdue(asked === READ_METER_NOW)) throw new ExpressionError(TIME_LIMIT);
    },
    use: () => undefined,
  };
  // liquidjs does not export its Limiter class (private fields make the type nominal); check and use are all
  // it calls on a render limit.
  return limiter as unknown as Context["renderLimit"];
}

export type FilterHandler = Extract<FilterImplOptions, (...args: never[]) => unknown>;
export type FilterThis = ThisParameterType<FilterHandler>;

const isIterator = (value: unknown): value is Iterator<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { next?: unknown }).next === "function";

/**
 * Steps a liquidjs filter coroutine (the array filters yield once per item) on behalf of liquidjs, checking
 * the render deadline at every step so a long filter stops at the time limit instead of running to the end.
 */
function* deadlineChecked(inner: Iterator<unknown>, ctx: Context): Generator<unknown, unknown, unknown> {
  let sent: unknown;
  let failed = false;
  for (;;) {
    const step = failed && inner.throw ? inner.throw(sent) : inner.next(sent);
    if (step.done) return step.value;
    ctx.renderLimit.check(performance.now());
    try {
      sent = yield step.value;
      failed = false;
    } catch (error) {
      sent = error;
      failed = true;
    }
  }
}

/**
 * liquidjs's comparisons, bounded as filters are: `==`, `!=` and `contains` walk arrays item by item and `<`, `>`
 * turn arrays into strings, all inside one step of the template where no deadline is read, so one condition of
 * 20 `r == r` on a range of a million held the process 3.8 s (review of 27 Nov 2026). Each comparison now reads
 * the deadline, refuses operands past MAX_FILTER_INPUT_UNITS, and `<`, `>`, `<=`, `>=` refuse arrays.
 */
export function boundedOperators(): Operators {
  const operators: Operators = { ...defaultOperators };
  // `and`, `or` and `not` only read the deadline: a chain of 1,000 `or`s is one step of the template otherwise.
  for (const name of ["and", "or", "not"]) {
    const inner = defaultOperators[name] as (...operands: unknown[]) => Generator<unknown, boolean, unknown>;
    operators[name] = function* (...operands: unknown[]): Generator<unknown, boolean, unknown> {
      (operands[operands.length - 1] as Context).renderLimit.check(performance.now());
      return yield* inner(...operands);
    };
  }
  for (const name of ["==", "!=", "contains", "<", ">", "<=", ">="]) {
    const inner = defaultOperators[name] as (l: unknown, r: unknown, ctx: Context) => unknown;
    const ordered = name.startsWith("<") || name.startsWith(">");
    operators[name] = function* (l: unknown, r: unknown, ctx: Context): Generator<unknown, boolean, unknown> {
      ctx.renderLimit.check(performance.now());
      if (ordered && (Array.isArray(l) || Array.isArray(r)))
        throw new ExpressionError(`'${name}' compares numbers and strings, not arrays`);
      if (overInputLimit([l, r])) throw new ExpressionError(`Operands of '${name}' are too large`);
      return Boolean(yield inner(l, r, ctx));
    };
  }
  return operators;
}

/**
 * liquidjs's context with every property read bounded: a key must be a string, a number or a boolean (an array
 * used as a key, `data[r]`, was turned into one long string at each read: 14 MB for a range of two million, and
 * 370 of them in one condition held the process 88 s), and each read checks the deadline (a condition, or a
 * `where_exp` expression, is one step of the template). Contexts it spawns (`where_exp` and the like) are bounded
 * too.
 */
export class BoundedContext extends Context {
  override readProperty(
    obj: Parameters<Context["readProperty"]>[0],
    key: Parameters<Context["readProperty"]>[1],
  ) {
    this.renderLimit.check(performance.now());
    const name: unknown = toValue(key);
    if (name !== null && typeof name === "object")
      throw new ExpressionError("A property name must be a string or a number");
    const value: unknown = super.readProperty(obj, key);
    // liquidjs turns an array into a string where a range's bound or a tag's limit is wanted (14 MB for a range of
    // two million, at each use): the meter is read before each use of a large one, so at most one runs late. Large
    // counts what it holds, nested arrays and copies too (push builds a tree of 11 items holding 67 MB).
    if (value !== null && typeof value === "object" && isLarge(value))
      this.renderLimit.check(READ_METER_NOW as unknown as number);
    return value;
  }

  override spawn(scope = {}): Context {
    const { sync, globals, strictVariables, ownPropertyOnly } = this;
    return new BoundedContext(
      scope,
      this.opts,
      { sync, globals, strictVariables, ownPropertyOnly },
      { renderLimit: this.renderLimit, memoryLimit: this.memoryLimit, liquid: this.liquid },
    );
  }
}

/**
 * liquidjs's filters whose arguments at these places are numbers it compares at every step of a loop inside the
 * filter: `truncate: n`, with n the text "65535" padded to 64 K characters, turned that text into a number 65,535
 * times in one call, 8 s (review of 27 Nov 2026). Made numbers here, once, as JavaScript would at each step.
 */
const NUMBER_ARGUMENTS: Readonly<Record<string, readonly number[]>> = {
  truncate: [0],
  truncatewords: [0],
  slice: [0, 1],
  sample: [0],
};
/**
 * The arguments that are values (appended, replaced, compared, collected), by filter: any other argument is code
 * (a path, an expression, a format, a separator, a count) and must be a number, a boolean, nil or a string no
 * longer than a template. liquidjs parses, coerces or walks those inside its own loops: a 6 M-character path
 * given to `where`, a tree as `sort`'s property, an array of numeric text as `date`'s time zone (read at every
 * `%z`) each held the process for seconds in one call (review of 27 Nov 2026).
 */
const VALUE_ARGUMENTS: Readonly<Record<string, readonly number[]>> = {
  append: [0],
  prepend: [0],
  concat: [0],
  push: [0],
  unshift: [0],
  // The default, and `allow_false: true`, a keyword argument liquidjs passes as a [name, value] list.
  default: [0, 1],
  replace: [0, 1],
  replace_first: [0, 1],
  replace_last: [0, 1],
  remove: [0],
  remove_first: [0],
  remove_last: [0],
  where: [1],
  reject: [1],
  find: [1],
  find_index: [1],
  has: [1],
  hmac: [0],
};
/** The longest text taken for a number in an argument that is code: no number is written longer. */
const LONGEST_NUMBER_TEXT = 256;
/**
 * Most `%` directives in a `date` format: liquidjs builds a new Intl.DateTimeFormat for each `%a %A %b %B %h %Z`
 * (about 42 µs), so a format of 2,000 `%b` took 75–115 ms in one call (review of 27 Nov 2026).
 */
const MAX_DATE_DIRECTIVES = 64;

/**
 * guardFilter's checks of a filter's arguments (numbers made numbers, code no longer than a template, no number
 * text past LONGEST_NUMBER_TEXT); throws ExpressionError. Also run once at parse time on a direct read's literal
 * arguments (expressions.ts, directFilters), so a direct read never accepts what liquidjs's filter refuses.
 */
export function checkArguments(name: string, args: unknown[], longestCode: number): void {
  for (const index of NUMBER_ARGUMENTS[name] ?? []) {
    const arg = args[index];
    if (arg === undefined || typeof arg === "number") continue;
    if (arg !== null && typeof arg === "object") throw new ExpressionError(`Filter '${name}' takes a number`);
    args[index] = Number(arg);
  }
  if (name === "date" && typeof args[0] === "string" && args[0].split("%").length - 1 > MAX_DATE_DIRECTIVES)
    throw new ExpressionError(`A date format holds at most ${MAX_DATE_DIRECTIVES} directives`);
  const values = VALUE_ARGUMENTS[name] ?? [];
  for (const [index, arg] of args.entries()) {
    if (values.includes(index)) continue;
    if (arg !== null && typeof arg === "object")
      throw new ExpressionError(`Filter '${name}' takes a string or a number, not a list or an object`);
    if (typeof arg !== "string") continue;
    if (arg.length > longestCode)
      throw new ExpressionError(`An argument of filter '${name}' is longer than ${longestCode} characters`);
    if (arg.length > LONGEST_NUMBER_TEXT && !Number.isNaN(Number(arg)))
      throw new ExpressionError(
        `A number given to filter '${name}' is longer than ${LONGEST_NUMBER_TEXT} characters`,
      );
  }
}

const isNil = (value: unknown) => value === null || value === undefined;
/** liquidjs's order of two keys (nil last), the keys already what is compared (lower-cased for sort_natural). */
function orderOf(a: unknown, b: unknown): number {
  if (isNil(a) || isNil(b)) return isNil(a) ? (isNil(b) ? 0 : 1) : -1;
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

/**
 * liquidjs's `sort` and `sort_natural` (an item's key: the item, or its property at a dotted path), refusing a
 * key that is a list or an object: liquidjs compares keys with `<` or lower-cases them, so a list as a key was
 * turned into a string at every one of n·log n comparisons, 90–100 ms in one step for 4,096 lists (review of 27
 * Nov 2026). Keys are read one by one, with the deadline, as liquidjs reads them, and lower-cased once each, not
 * at every comparison; the input is bounded lower than other filters' (N_LOG_N_INPUT_UNITS).
 */
export function boundedSort(name: "sort" | "sort_natural"): FilterImplOptions {
  return function* (
    this: FilterThis,
    input: unknown,
    property?: unknown,
  ): Generator<unknown, unknown, unknown> {
    const value = toValue(input);
    const items: unknown[] = isNil(value) ? [] : Array.isArray(value) ? value : [value];
    this.context.memoryLimit.use(items.length);
    const path = property ? String(property).split(".") : undefined;
    const keyed: [unknown, unknown][] = [];
    for (const item of items) {
      const key = path ? yield this.context._getFromScope(item, path, false) : item;
      if (key !== null && typeof key === "object")
        throw new ExpressionError(`'${name}' orders numbers and strings, not lists or objects`);
      keyed.push([
        item,
        name === "sort_natural" && !isNil(key) ? String.prototype.toLowerCase.call(key) : key,
      ]);
    }
    return keyed.sort((l, r) => orderOf(l[1], r[1])).map(([item]) => item);
  };
}

/** liquidjs's text of a value: nil empty, a list its items' texts joined, anything else String(). */
const liquidText = (value: unknown): string =>
  typeof value === "string"
    ? value
    : isNil(value)
      ? ""
      : Array.isArray(value)
        ? value.map(liquidText).join("")
        : String(value);

/**
 * liquidjs's `sample` (`count` items in a random order, one item when 1), shuffled in one pass (Fisher–Yates):
 * liquidjs sorted with a random comparator, n·log n in one step, 35–57 ms for 99,990 items (review of 27 Nov 2026).
 */
export function sample(this: FilterThis, input: unknown, count: unknown = 1): unknown {
  const value = toValue(input);
  if (isNil(value)) return [];
  const items = Array.isArray(value) ? [...value] : [...liquidText(value)];
  this.context.memoryLimit.use(items.length);
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1)); // as liquidjs: an order, not a secret
    [items[i], items[j]] = [items[j], items[i]];
  }
  return count === 1 ? items[0] : items.slice(0, count as number);
}

/** Filters whose work grows as n·log n with their input: a lower bound than other filters', 20,000 units. */
const N_LOG_N_INPUT_UNITS: Readonly<Record<string, number>> = { sort: 20_000, sort_natural: 20_000 };

/** Wraps a filter: the deadline is checked before and after it (and during it, for coroutines). */
export function guardFilter(name: string, impl: FilterImplOptions, longestCode: number): FilterImplOptions {
  const handler: FilterHandler = typeof impl === "function" ? impl : impl.handler;
  const guarded = function (this: FilterThis, value: unknown, ...args: unknown[]): unknown {
    const ctx = this.context;
    ctx.renderLimit.check(performance.now());
    if (overInputLimit([value, ...args], N_LOG_N_INPUT_UNITS[name]))
      throw new ExpressionError(`Input of filter '${name}' is too large`);
    checkArguments(name, args, longestCode);
    const result: unknown = handler.call(this, value, ...args);
    if (isIterator(result)) return deadlineChecked(result, ctx);
    ctx.renderLimit.check(performance.now());
    return result;
  };
  return typeof impl === "function" ? guarded : { handler: guarded, raw: impl.raw };
}
