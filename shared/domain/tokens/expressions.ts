/**
 * The expression engine behind token masks, fingerprint expressions, search indexes and alias token ids.
 * Expressions are Liquid templates (liquidjs) with the token's data in scope as `data`; see docs/expressions.md.
 *
 * Hostile expressions are fast ExpressionErrors: template length, parse length and memory are limited by
 * liquidjs, render time by the budget of the call or of its request (render-budget.ts, checked through
 * liquidjs's render limit), output length by the emitter below, and the tags that load other templates are not
 * registered (and the file system behind them is a stub that refuses every read).
 */
import {
  CaptureTag,
  CaseTag,
  Context,
  defaultOperators,
  type Emitter,
  evalToken,
  type FilterImplOptions,
  type FS,
  Liquid,
  LiquidError,
  type Operators,
  Output,
  type Template,
  toValue,
  toValueSync,
} from "liquidjs";
import { namesForbiddenKey } from "#shared/domain/safe-keys.ts";
import { canonicalJson, ExpressionError, expressionFilters } from "./expression-filters.ts";
import { plainPathOf, readPlainPath } from "./plain-path.ts";
import {
  type Overdue,
  type RenderBudget,
  type RenderMeter,
  type RenderScheduler,
  realTime,
  standaloneBudget,
  stoppedWatch,
  TIME_LIMIT,
} from "./render-budget.ts";

export { luhnValid } from "./checksums.ts";
export { ExpressionError } from "./expression-filters.ts";

export interface ExpressionEngineOptions {
  /**
   * Time budget of one call outside a request (one evaluateStructure call shares one budget). Default 100 ms.
   * A request's calls (forRequest) share the request's budget instead.
   */
  renderLimitMs?: number;
  /** Longest rendered string (and longest string an expression builds by capture or padding). Default 65536. */
  maxOutputChars?: number;
  /** Longest template accepted. Default 4096. */
  maxTemplateChars?: number;
  /** liquidjs memory units (roughly characters and array items allocated) per render. Default 2,000,000. */
  memoryLimit?: number;
  /** Parsed templates kept (least recently used dropped first). Default 500. */
  cacheSize?: number;
}

export interface EngineWiring {
  /** The process's render scheduler: requests' budgets, tenants' shares and turns (render-budget.ts). */
  scheduler?: RenderScheduler;
  /** What measures render time outside a request. Default performance.now(). */
  meter?: RenderMeter;
}

export interface ExpressionEngine {
  /**
   * Parses only: throws ExpressionError for a syntax error, an unknown filter or tag, or a too long template.
   * A parse is charged to the budget as a render is (parseIn, below).
   */
  validate(template: string): Promise<void>;
  /** The global variables a valid template reads (`data` for `{{ data.number }}`); charged as validate is. */
  variablesRead(template: string): Promise<readonly string[]>;
  /** Renders to a string; objects and arrays print as canonical JSON, null and undefined as "". */
  render(template: string, scope: Record<string, unknown>): Promise<string>;
  /** The typed value when the template is a single `{{ ... }}` (undefined → null), else the same as render. */
  evaluate(template: string, scope: Record<string, unknown>): Promise<unknown>;
  /** evaluate() on every string holding `{{` or `{%` inside objects and arrays; other leaves as they are. */
  evaluateStructure(structure: unknown, scope: Record<string, unknown>): Promise<unknown>;
  /**
   * The engine for one request of `bucket` (its tenant): every render of the request, through the returned
   * engine, draws from one budget and from the tenant's share. Scoping that engine again keeps its budget.
   */
  forRequest(bucket: string): ExpressionEngine;
}

const DEFAULTS = {
  renderLimitMs: 100,
  maxOutputChars: 65_536,
  maxTemplateChars: 4_096,
  // Ranges are charged here: a range is the one cheap way to a large array, which liquidjs turns into a string
  // where a range's bound or a tag's limit is wanted. 200,000 keeps that string near a megabyte (two million
  // made it 14 MB, at each use: 0.2–1 s; review of 27 Nov 2026).
  memoryLimit: 200_000,
  cacheSize: 500,
} as const;
const MAX_STRUCTURE_DEPTH = 64;
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
function overInputLimit(values: unknown[], limit = MAX_FILTER_INPUT_UNITS): boolean {
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
/** Tags that load other templates; expressions are self-contained, so they do not exist here. */
const FILE_TAGS = ["include", "render", "layout"] as const;
/**
 * Tags removed for their cost: `tablerow` turns its `cols` into a number at every item, inside its own loop where
 * no argument check reaches (an array there: 0.2–0.65 s in one render; review of 27 Nov 2026), and writes HTML
 * tables, which no mask, index or fingerprint needs.
 */
const COSTLY_TAGS = ["tablerow"] as const;

const OUTPUT_LIMIT = "Expression output exceeded its size limit";

const refuseFile = (): never => {
  throw new ExpressionError("Expressions cannot load templates");
};
/** Defence in depth behind the removed tags: a file system where nothing exists and nothing can be read. */
const NO_FILES: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => refuseFile(),
  readFileSync: refuseFile,
  resolve: (_dir, file) => file,
  contains: async () => false,
  containsSync: () => false,
};

/** Collects rendered output as a string, refusing to grow past the limit (checked on every write). */
class BoundedEmitter implements Emitter {
  buffer = "";
  constructor(private readonly maxChars: number) {}
  write(html: unknown): void {
    const value: unknown = toValue(html);
    const piece =
      typeof value === "string"
        ? value
        : value === null || value === undefined
          ? ""
          : typeof value === "object"
            ? canonicalJson(value)
            : String(value);
    if (this.buffer.length + piece.length > this.maxChars) throw new ExpressionError(OUTPUT_LIMIT);
    this.buffer += piece;
  }
}

/** Keeps the one value a single-output template writes, typed. */
class TypedEmitter implements Emitter {
  buffer = "";
  value: unknown = null;
  write(html: unknown): void {
    const value: unknown = toValue(html);
    this.value = value === undefined ? null : value;
  }
}

/** Walks liquidjs's wrapping (RenderError.originalError, LiquidErrors) down to the first cause. */
function rootCauses(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 32; depth++) {
    chain.push(current);
    if (current instanceof LiquidError) {
      const nested = (current as LiquidError & { errors?: unknown[] }).errors;
      current = current.originalError ?? nested?.[0];
    } else {
      current = undefined;
    }
  }
  return chain;
}

const safeName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 64);

/**
 * Turns anything thrown while parsing or rendering into an ExpressionError with a fixed, data-free message.
 * liquidjs messages are only pattern-matched, never passed on: they can quote template text and values.
 * Filter and tag names are named only for parse errors: at render time liquidjs also parses strings taken
 * from the data (`where_exp` and friends), so a name found then could be a piece of the data.
 */
function toExpressionError(error: unknown, phase: "parse" | "render"): ExpressionError {
  const chain = rootCauses(error);
  const own = chain.find((e): e is ExpressionError => e instanceof ExpressionError);
  if (own) return own;
  const messages = chain.map((e) => (e instanceof Error ? e.message : ""));
  const has = (pattern: RegExp) => messages.some((m) => pattern.test(m));
  if (has(/template render limit exceeded/)) return new ExpressionError(TIME_LIMIT);
  if (has(/memory alloc limit exceeded/)) return new ExpressionError("Expression exceeded its memory limit");
  if (has(/parse length limit exceeded/)) return new ExpressionError("Expression is too long");
  if (chain.some((e) => e instanceof RangeError && /string length/i.test(e.message))) {
    return new ExpressionError(OUTPUT_LIMIT);
  }
  if (phase === "render") return new ExpressionError("Expression failed to render");
  for (const message of messages) {
    const filter = /^undefined filter: ([^\s,]+)/.exec(message);
    if (filter?.[1]) return new ExpressionError(`Unknown filter '${safeName(filter[1])}'`);
    const tag = /^tag "([^"]+)" not found/.exec(message);
    if (tag?.[1]) return new ExpressionError(`Unknown tag '${safeName(tag[1])}'`);
  }
  const at = /line:(\d+), col:(\d+)/.exec(messages[0] ?? "");
  return new ExpressionError(
    at ? `Invalid expression syntax at line ${at[1]}, column ${at[2]}` : "Invalid expression syntax",
  );
}

const RESERVED_NAME = "Expressions must not name __proto__, prototype or constructor";

/**
 * Whether the code of any tag (`{{ ... }}`, `{% ... %}`) names `__proto__`, `prototype` or `constructor`,
 * as a property, an index or a string. A linear scan with indexOf; text outside tags is not looked at.
 * liquidjs already reads own properties only (ownPropertyOnly); this refuses such expressions outright.
 */
export function tagsNameReservedKey(template: string): boolean {
  let from = 0;
  for (;;) {
    const output = template.indexOf("{{", from);
    const tag = template.indexOf("{%", from);
    if (output < 0 && tag < 0) return false;
    const start = output < 0 ? tag : tag < 0 ? output : Math.min(output, tag);
    const close = template.indexOf(start === output ? "}}" : "%}", start + 2);
    const end = close < 0 ? template.length : close;
    if (namesForbiddenKey(template.slice(start + 2, end))) return true;
    if (close < 0) return false;
    from = close + 2;
  }
}

type FilterHandler = Extract<FilterImplOptions, (...args: never[]) => unknown>;
type FilterThis = ThisParameterType<FilterHandler>;

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
function boundedOperators(): Operators {
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
class BoundedContext extends Context {
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

function checkArguments(name: string, args: unknown[], longestCode: number): void {
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
function boundedSort(name: "sort" | "sort_natural"): FilterImplOptions {
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
function sample(this: FilterThis, input: unknown, count: unknown = 1): unknown {
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
function guardFilter(name: string, impl: FilterImplOptions, longestCode: number): FilterImplOptions {
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

interface Parsed {
  templates: Template[];
  /** Set when the template is one output tag with only whitespace around it. */
  single?: Template[];
  /** That tag's path when it is a plain path (`{{ data.number }}`): read without liquidjs (plain-path.ts). */
  path?: readonly string[];
  /** Whether the template is that tag alone, with no whitespace around it (render() then writes only it). */
  bare?: boolean;
  /** Its global variables, once asked (variablesRead). */
  variables?: readonly string[];
}

/** Passed to a render limit's check before a step that may cost much: the meter is read then, not every 16th time. */
const READ_METER_NOW = "read the meter now";
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
function budgetLimiter(overdue: Overdue): Context["renderLimit"] {
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

export function createExpressionEngine(
  options: ExpressionEngineOptions = {},
  wiring: EngineWiring = {},
): ExpressionEngine {
  const limits: Required<ExpressionEngineOptions> = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const value = options[key];
    if (value !== undefined) limits[key] = value;
  }
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  }
  const { renderLimitMs, maxOutputChars, maxTemplateChars, memoryLimit, cacheSize } = limits;

  const liquid = new Liquid({
    strictFilters: true,
    ownPropertyOnly: true,
    fs: NO_FILES,
    root: [],
    relativeReference: false,
    dynamicPartials: false,
    parseLimit: maxTemplateChars,
    renderLimit: renderLimitMs,
    memoryLimit,
    operators: boundedOperators(),
  });
  for (const tag of [...FILE_TAGS, ...COSTLY_TAGS]) delete liquid.tags[tag];
  // {% case %} compares with liquidjs's own equality, not the operators: the same comparisons, bounded the same way.
  liquid.registerTag(
    "case",
    class BoundedCase extends CaseTag {
      override *render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
        const equals = ctx.opts.operators["=="] as (l: unknown, r: unknown, ctx: Context) => unknown;
        const target = yield toValue(yield this.value.value(ctx, ctx.opts.lenientIf));
        let hit = false;
        // As liquidjs's own: every branch one of whose values matches is rendered, else the else branch.
        for (const branch of this.branches)
          for (const token of branch.values)
            if (yield equals(target, yield evalToken(token, ctx, ctx.opts.lenientIf), ctx)) {
              yield this.liquid.renderer.renderTemplates(branch.templates, ctx, emitter);
              hit = true;
              break;
            }
        if (!hit) yield this.liquid.renderer.renderTemplates(this.elseTemplates, ctx, emitter);
      }
    },
  );
  // {% capture %} normally buffers without limit; this one shares the output limit and charges memory.
  liquid.registerTag(
    "capture",
    class BoundedCapture extends CaptureTag {
      override *render(ctx: Context): Generator<unknown, void, string> {
        const emitter = new BoundedEmitter(maxOutputChars);
        yield this.liquid.renderer.renderTemplates(this.templates, ctx, emitter);
        ctx.memoryLimit.use(emitter.buffer.length);
        (ctx.bottom() as Record<string, unknown>)[this.variable] = emitter.buffer;
      }
    },
  );
  for (const [name, impl] of Object.entries(liquid.filters)) {
    liquid.registerFilter(name, guardFilter(name, impl, maxTemplateChars));
  }
  for (const name of ["sort", "sort_natural"] as const)
    liquid.registerFilter(name, guardFilter(name, boundedSort(name), maxTemplateChars));
  liquid.registerFilter("sample", guardFilter("sample", sample as FilterHandler, maxTemplateChars));
  for (const [name, definition] of Object.entries(expressionFilters({ maxOutputChars }))) {
    const [fewest, most] = definition.arity;
    const handler = function (this: FilterThis, input: unknown, ...args: unknown[]) {
      if (args.length < fewest || args.length > most) {
        throw new ExpressionError(
          fewest === most
            ? `${name} takes ${fewest === 0 ? "no arguments" : `${fewest} argument(s)`}`
            : `${name} takes ${fewest} to ${most} arguments`,
        );
      }
      return definition.apply(this.context.memoryLimit, toValue(input), args.map(toValue));
    };
    liquid.registerFilter(name, guardFilter(name, handler, maxTemplateChars));
  }

  const cache = new Map<string, Parsed>();

  function cached(template: string): Parsed | undefined {
    const hit = cache.get(template);
    if (hit) {
      cache.delete(template);
      cache.set(template, hit);
    }
    return hit;
  }

  function parse(template: string): Parsed {
    if (typeof template !== "string") throw new ExpressionError("Expression must be a string");
    const hit = cached(template);
    if (hit) return hit;
    if (template.length > maxTemplateChars) {
      throw new ExpressionError(`Expression is longer than ${maxTemplateChars} characters`);
    }
    if (tagsNameReservedKey(template)) throw new ExpressionError(RESERVED_NAME);
    let parsed: Parsed;
    try {
      parsed = { templates: liquid.parse(template) };
      const trimmed = template.trim();
      if (trimmed.startsWith("{{") && trimmed.endsWith("}}")) {
        const single = trimmed === template ? parsed.templates : liquid.parse(trimmed);
        if (single.length === 1 && single[0] instanceof Output) {
          parsed.single = single;
          parsed.path = plainPathOf(trimmed);
          parsed.bare = trimmed === template;
        }
      }
    } catch (error) {
      throw toExpressionError(error, "parse");
    }
    cache.set(template, parsed);
    if (cache.size > cacheSize) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    return parsed;
  }

  /**
   * A template's parse: from the cache, else charged to `budget` as a render is (a turn of the render slot, the
   * request's time and the tenant's share). A parse cannot be interrupted and its author sets its cost: 800
   * `{{a}}` in one template took 5 ms, and a detokenization's 1,000 filters, parsed unmetered, held the process
   * 0.8 s per request (review of 27 Nov 2026). Bounded by the template's length, one parse overruns a budget at
   * most by its own time.
   */
  async function parseIn(budget: RenderBudget, template: string): Promise<Parsed> {
    if (typeof template === "string") {
      const hit = cached(template);
      if (hit) return hit;
    }
    return budget.run(async () => parse(template));
  }

  async function run(
    templates: Template[],
    scope: Record<string, unknown>,
    emitter: Emitter,
    budget: RenderBudget,
  ): Promise<void> {
    // A null-prototype copy: {% increment %} writes into the scope object, and nothing inherited is visible.
    const env: Record<string, unknown> = Object.assign(Object.create(null), scope);
    await budget.run(async (overdue) => {
      const ctx = new BoundedContext(
        env,
        liquid.options,
        { memoryLimit },
        { liquid, renderLimit: budgetLimiter(overdue) },
      );
      try {
        toValueSync(liquid.renderer.renderTemplates(templates, ctx, emitter));
      } catch (error) {
        throw toExpressionError(error, "render");
      }
    });
  }

  /** A plain path's value, when it is a string, number or boolean within the output limit; else undefined. */
  function plainValue(parsed: Parsed, scope: Record<string, unknown>) {
    if (!parsed.path) return undefined;
    const value = readPlainPath(scope, parsed.path);
    return typeof value === "string" && value.length > maxOutputChars ? undefined : value;
  }

  async function renderParsed(parsed: Parsed, scope: Record<string, unknown>, budget: RenderBudget) {
    // A plain path renders as liquidjs would print it, with no render: nothing to time or to charge.
    const plain = parsed.bare ? plainValue(parsed, scope) : undefined;
    if (plain !== undefined) return String(plain);
    const emitter = new BoundedEmitter(maxOutputChars);
    await run(parsed.templates, scope, emitter, budget);
    return emitter.buffer;
  }

  async function evaluateParsed(
    parsed: Parsed,
    scope: Record<string, unknown>,
    budget: RenderBudget,
  ): Promise<unknown> {
    if (!parsed.single) return renderParsed(parsed, scope, budget);
    const plain = plainValue(parsed, scope);
    if (plain !== undefined) return plain;
    const emitter = new TypedEmitter();
    await run(parsed.single, scope, emitter, budget);
    const value = emitter.value;
    if (typeof value === "string" && value.length > maxOutputChars) throw new ExpressionError(OUTPUT_LIMIT);
    if (typeof value !== "object" || value === null) return value;
    // A typed result is bounded as a filter's input is (`{{ (1..1999999) }}` was 15 MB of JSON, copied whole).
    if (overInputLimit([value])) throw new ExpressionError(OUTPUT_LIMIT);
    // A copy, so a result that is (part of) the token data can be changed without changing the data.
    try {
      return structuredClone(value);
    } catch {
      throw new ExpressionError("Expression result is not JSON data");
    }
  }

  const isExpression = (value: string) => value.includes("{{") || value.includes("{%");

  async function walk(
    node: unknown,
    scope: Record<string, unknown>,
    budget: RenderBudget,
    depth: number,
  ): Promise<unknown> {
    if (depth > MAX_STRUCTURE_DEPTH) throw new ExpressionError("Mask structure is nested too deeply");
    if (typeof node === "string") {
      if (!isExpression(node)) return node;
      // Each string asks, as a render step does: a mask of 2,000 plain paths asked nothing (review of 27 Nov 2026).
      await budget.run(async (overdue) => {
        if (overdue()) throw new ExpressionError(TIME_LIMIT);
      });
      return evaluateParsed(parse(node), scope, budget);
    }
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (const item of node) out.push(await walk(item, scope, budget, depth + 1));
      return out;
    }
    if (typeof node === "object" && node !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) {
        // defineProperty: a "__proto__" key in the structure stays an ordinary key.
        Object.defineProperty(out, key, {
          value: await walk(value, scope, budget, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return node;
  }

  /** Whether a structure holds a string to evaluate (too deep counts: walk refuses it). */
  const hasExpression = (node: unknown, depth: number): boolean => {
    if (depth > MAX_STRUCTURE_DEPTH) return true;
    if (typeof node === "string") return isExpression(node);
    if (typeof node !== "object" || node === null) return false;
    return (Array.isArray(node) ? node : Object.values(node)).some((item) => hasExpression(item, depth + 1));
  };

  /** The renders inside one turn of a budget: each runs at once, under the turn's time limit. */
  const inTurn = (overdue: Overdue): RenderBudget => ({ run: (render) => render(overdue) });

  const meter = wiring.meter ?? (() => performance.now());
  // An injected meter counts work: no real-time readings beside it (render-budget.ts, Stopwatch).
  const stopwatch = wiring.meter ? stoppedWatch : realTime;
  const standalone = () => standaloneBudget(renderLimitMs, renderLimitMs, meter, stopwatch);

  // Classes, not objects of closures: a request's engine is made on every request that reaches a token group.
  /** The engine outside any request: each call has a budget of its own (renderLimitMs). */
  class Engine implements ExpressionEngine {
    protected budget(): RenderBudget {
      return standalone();
    }
    async validate(template: string): Promise<void> {
      await parseIn(this.budget(), template);
    }
    async variablesRead(template: string): Promise<readonly string[]> {
      const budget = this.budget();
      const parsed = await parseIn(budget, template);
      parsed.variables ??= await budget.run(async () => variablesRead(template));
      return parsed.variables;
    }
    async render(template: string, scope: Record<string, unknown>): Promise<string> {
      const budget = this.budget();
      return renderParsed(await parseIn(budget, template), scope, budget);
    }
    async evaluate(template: string, scope: Record<string, unknown>): Promise<unknown> {
      const budget = this.budget();
      return evaluateParsed(await parseIn(budget, template), scope, budget);
    }
    async evaluateStructure(structure: unknown, scope: Record<string, unknown>): Promise<unknown> {
      const budget = this.budget();
      if (typeof structure === "string")
        return isExpression(structure)
          ? evaluateParsed(await parseIn(budget, structure), scope, budget)
          : structure;
      if (!hasExpression(structure, 0)) return walk(structure, scope, budget, 0);
      // One turn of the render slot and one allowance for the whole structure (a mask's strings): one wait
      // for the slot and two meter readings instead of one per string.
      return budget.run((overdue) => walk(structure, scope, inTurn(overdue), 0));
    }
    forRequest(bucket: string): ExpressionEngine {
      return new RequestEngine(bucket);
    }
  }

  /** A request's engine: one budget for all its calls (made at the first); scoping it again keeps that budget. */
  class RequestEngine extends Engine {
    private scoped: RenderBudget | undefined;
    constructor(private readonly bucket: string) {
      super();
    }
    protected override budget(): RenderBudget {
      this.scoped ??= wiring.scheduler ? wiring.scheduler.budget(this.bucket) : standalone();
      return this.scoped;
    }
    override forRequest(): ExpressionEngine {
      return this;
    }
  }

  return new Engine();
}

/** Parses only (no filters or tags run, no partials read): templates reach here after validate(). */
const analyzer = new Liquid({
  strictFilters: false,
  dynamicPartials: false,
  fs: NO_FILES,
  root: [],
  // Without it liquidjs warns at start-up that NO_FILES has no dirname (no template here includes another).
  relativeReference: false,
});

/** Templates whose global variables are known; every create checks its fingerprint expression (one parse saved). */
const variablesByTemplate = new Map<string, readonly string[]>();
const VARIABLES_CACHE_SIZE = 500;

/**
 * The global variables a template reads (`data` for `{{ data.number | last4 }}`), from the parsed template:
 * variables it assigns or captures itself are not global. Call after validate(). A pure function of the
 * template, so the answer is kept (the most recently used templates, like the engine's parse cache).
 */
export function variablesRead(template: string): readonly string[] {
  const known = variablesByTemplate.get(template);
  if (known) {
    variablesByTemplate.delete(template);
    variablesByTemplate.set(template, known);
    return known;
  }
  const variables = Object.freeze(analyzer.globalVariablesSync(template, { partials: false }));
  variablesByTemplate.set(template, variables);
  if (variablesByTemplate.size > VARIABLES_CACHE_SIZE) {
    const oldest = variablesByTemplate.keys().next();
    if (!oldest.done) variablesByTemplate.delete(oldest.value);
  }
  return variables;
}
