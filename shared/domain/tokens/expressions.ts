/**
 * The expression engine behind token masks, fingerprint expressions, search indexes and alias token ids.
 * Expressions are Liquid templates (liquidjs) with the token's data in scope as `data`; see docs/expressions.md.
 *
 * Hostile expressions are fast ExpressionErrors: template length, parse length and memory are limited by
 * liquidjs, render time by the budget of the call or of its request (render-budget.ts, checked through
 * liquidjs's render limit), the work of each uninterruptible step by liquid-bounds.ts, output length by the
 * emitter below, and the tags that load other templates are not registered (and the file system behind them is
 * a stub that refuses every read).
 */
import {
  CaptureTag,
  CaseTag,
  type Context,
  type Emitter,
  evalToken,
  type FS,
  Liquid,
  LiquidError,
  Output,
  type Template,
  TokenKind,
  toValue,
  toValueSync,
} from "liquidjs";
import { namesForbiddenKey } from "#shared/domain/safe-keys.ts";
import { canonicalJson, ExpressionError, expressionFilters } from "./expression-filters.ts";
import {
  BoundedContext,
  boundedOperators,
  boundedSort,
  budgetLimiter,
  checkArguments,
  type FilterHandler,
  type FilterThis,
  guardFilter,
  MAX_FILTER_INPUT_UNITS,
  overInputLimit,
  sample,
} from "./liquid-bounds.ts";
import {
  DIRECT_INPUT_CHARS,
  type DirectStep,
  type DirectWork,
  filteredPathOf,
  MAX_DIRECT_WORK,
  plainPathOf,
  readFilteredPath,
  readPlainPath,
} from "./plain-path.ts";
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
  /**
   * The filters of a template that is one output tag (`{{ data | last4 }}`), in order; undefined for any other
   * template. Charged as validate is.
   */
  outputFilters(template: string): Promise<readonly FilterUse[] | undefined>;
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

/**
 * A filter an output tag applies: its name, whether every argument is a positional literal (no variable, range,
 * group or `key: value`), and then the arguments' values.
 */
export interface FilterUse {
  name: string;
  literalArguments: boolean;
  /** The arguments' values, in order (undefined for one that is not a literal). */
  arguments: readonly unknown[];
}

const LITERAL_KINDS = new Set([TokenKind.Number, TokenKind.Literal, TokenKind.Quoted]);

type FilterArgument = Output["value"]["filters"][number]["args"][number];
const isLiteral = (argument: FilterArgument): boolean =>
  !Array.isArray(argument) && LITERAL_KINDS.has(argument?.kind ?? TokenKind.Word);
/** A literal argument's value (QuotedToken, NumberToken and LiteralToken all hold it as `content`). */
const literalValue = (argument: FilterArgument): unknown =>
  isLiteral(argument) ? (argument as unknown as { content: unknown }).content : undefined;

/**
 * The vault's filters a direct read may apply (plain-path.ts): string work bounded by the input's length, charging
 * no memory, the card mask's among them. At most MAX_DIRECT_FILTERS of them in one output.
 */
const DIRECT_FILTERS = new Set(["reveal_last", "reveal", "last4", "card_mask", "card_bin"]);
const MAX_DIRECT_FILTERS = 4;
/**
 * A structure (a mask) read wholly directly has at most this many expression strings, and its filtered ones do at
 * most MAX_DIRECT_WORK together (plain-path.ts); else it takes one render turn.
 */
const MAX_DIRECT_STRINGS = 16;
/**
 * A direct read's value is at most twice DIRECT_INPUT_CHARS UTF-16 units (a filter writes a mask character of at
 * most two for each character): guardFilter counts it beside the arguments (overInputLimit), so arguments past
 * this are left to liquidjs.
 */
const DIRECT_ARGUMENT_UNITS = MAX_FILTER_INPUT_UNITS - (2 * DIRECT_INPUT_CHARS + 1);

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
 * The most a structure's expressions (a mask's strings) may produce together, in characters of their values (as
 * JSON where not a string): twice the largest data. Each expression alone is capped, but a 32 KiB mask of 2,900
 * `{{data}}` strings made one 60 KB token's masked answer 174 MB (amplification review, 28 Nov 2026).
 */
export const MAX_STRUCTURE_OUTPUT_CHARS = 128 * 1024;
const STRUCTURE_OUTPUT_LIMIT = `A mask's result exceeded ${MAX_STRUCTURE_OUTPUT_CHARS} characters`;
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

/** What readsDirectly found of a structure: its expression strings, their work, and the values read. */
interface DirectReads {
  strings: number;
  work: DirectWork;
  values: Map<string, unknown>;
}

/** One structure's walk: its scope, its budget (a turn), what direct reads may do, values read, output so far. */
interface WalkState {
  scope: Record<string, unknown>;
  budget: RenderBudget;
  work: DirectWork;
  known: ReadonlyMap<string, unknown>;
  output: { chars: number };
}

interface Parsed {
  templates: Template[];
  /** Set when the template is one output tag with only whitespace around it. */
  single?: Template[];
  /** That tag's path when it is a plain path (`{{ data.number }}`): read without liquidjs (plain-path.ts). */
  path?: readonly string[];
  /** A plain path through direct filters (`{{ data.number | reveal_last: 4 }}`): read without liquidjs too. */
  filtered?: { path: readonly string[]; steps: readonly DirectStep[] };
  /** Whether the template is that tag alone, with no whitespace around it (render() then writes only it). */
  bare?: boolean;
  /** Its global variables, once asked (variablesRead). */
  variables?: readonly string[];
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
  const filterDefinitions = expressionFilters({ maxOutputChars });
  for (const [name, definition] of Object.entries(filterDefinitions)) {
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

  /** The path and filters of a one-output template a direct read answers, or undefined (plain-path.ts). */
  function directFilters(template: string, output: Output): Parsed["filtered"] {
    const path = filteredPathOf(template);
    const { filters } = output.value;
    if (!path || filters.length === 0 || filters.length > MAX_DIRECT_FILTERS) return undefined;
    const steps: DirectStep[] = [];
    for (const filter of filters) {
      const definition = DIRECT_FILTERS.has(filter.name) ? filterDefinitions[filter.name] : undefined;
      if (!definition || !filter.args.every(isLiteral)) return undefined;
      const args = filter.args.map(literalValue);
      const [fewest, most] = definition.arity;
      if (args.length < fewest || args.length > most) return undefined;
      if (!args.every((arg) => typeof arg === "string" || typeof arg === "number")) return undefined;
      // guardFilter's argument checks, once (the arguments are literals): what they refuse is left to liquidjs,
      // whose guarded filter fails with its own error (a quoted count of 300 digits was read directly; review s53).
      if (overInputLimit(args, DIRECT_ARGUMENT_UNITS)) return undefined;
      try {
        checkArguments(filter.name, args, maxTemplateChars);
      } catch {
        return undefined;
      }
      steps.push({ apply: definition.apply, args });
    }
    return { path, steps };
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
          if (!parsed.path) parsed.filtered = directFilters(trimmed, single[0]);
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

  /**
   * A plain path's value (or a filtered one's string, within what `work` has left), when it is a string, number or
   * boolean within the output limit; else undefined.
   */
  function plainValue(parsed: Parsed, scope: Record<string, unknown>, work: DirectWork) {
    const value = parsed.path
      ? readPlainPath(scope, parsed.path)
      : parsed.filtered
        ? readFilteredPath(scope, parsed.filtered.path, parsed.filtered.steps, work)
        : undefined;
    return typeof value === "string" && value.length > maxOutputChars ? undefined : value;
  }

  /**
   * Whether every expression string of `node` is parsed already and read directly on `scope`: at most
   * MAX_DIRECT_STRINGS of them, filtering at most MAX_DIRECT_WORK together (`seen.work`, which it stops at). The
   * structure is then evaluated with no turn of the render slot, as a plain path is: a few microseconds, against a
   * turn and its meter. The values read are kept in `seen.values` for walk, which reads none again.
   */
  function readsDirectly(node: unknown, scope: Record<string, unknown>, seen: DirectReads, depth = 0) {
    if (depth > MAX_STRUCTURE_DEPTH) return false;
    if (typeof node === "string") {
      if (!isExpression(node)) return true;
      if (++seen.strings > MAX_DIRECT_STRINGS) return false;
      if (seen.values.has(node)) return true;
      const parsed = cache.get(node);
      const value = parsed?.single === undefined ? undefined : plainValue(parsed, scope, seen.work);
      if (value === undefined) return false;
      seen.values.set(node, value);
      return true;
    }
    if (typeof node !== "object" || node === null) return true;
    for (const item of Array.isArray(node) ? node : Object.values(node))
      if (!readsDirectly(item, scope, seen, depth + 1)) return false;
    return true;
  }

  /** A plain path as liquidjs would print it, read with no render (nothing to time or to charge), else undefined. */
  function plainText(parsed: Parsed, scope: Record<string, unknown>, work: DirectWork): string | undefined {
    const plain = parsed.bare ? plainValue(parsed, scope, work) : undefined;
    return plain === undefined ? undefined : String(plain);
  }

  async function renderParsed(
    parsed: Parsed,
    scope: Record<string, unknown>,
    budget: RenderBudget,
    work: DirectWork,
  ) {
    return plainText(parsed, scope, work) ?? renderTemplates(parsed, scope, budget);
  }

  /** liquidjs's render of the templates, in a turn of `budget`, its output bounded. */
  async function renderTemplates(parsed: Parsed, scope: Record<string, unknown>, budget: RenderBudget) {
    const emitter = new BoundedEmitter(maxOutputChars);
    await run(parsed.templates, scope, emitter, budget);
    return emitter.buffer;
  }

  async function evaluateParsed(
    parsed: Parsed,
    scope: Record<string, unknown>,
    budget: RenderBudget,
    work: DirectWork,
  ): Promise<unknown> {
    if (!parsed.single) return renderParsed(parsed, scope, budget, work);
    const plain = plainValue(parsed, scope, work);
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

  /** Charges an expression's value to its structure's output (MAX_STRUCTURE_OUTPUT_CHARS). */
  function tally(output: { chars: number }, value: unknown): unknown {
    output.chars += typeof value === "string" ? value.length : (JSON.stringify(value)?.length ?? 0);
    if (output.chars > MAX_STRUCTURE_OUTPUT_CHARS) throw new ExpressionError(STRUCTURE_OUTPUT_LIMIT);
    return value;
  }

  async function walk(node: unknown, state: WalkState, depth: number): Promise<unknown> {
    if (depth > MAX_STRUCTURE_DEPTH) throw new ExpressionError("Mask structure is nested too deeply");
    if (typeof node === "string") {
      if (!isExpression(node)) return node;
      const { scope, budget, work, known, output } = state;
      // Each string asks, as a render step does: a mask of 2,000 plain paths asked nothing (review of 27 Nov 2026).
      await budget.run(async (overdue) => {
        if (overdue()) throw new ExpressionError(TIME_LIMIT);
      });
      // A value readsDirectly read already is not read again (the same template on the same scope: the same value).
      const value = known.has(node)
        ? known.get(node)
        : await evaluateParsed(parse(node), scope, budget, work);
      return tally(output, value);
    }
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (const item of node) out.push(await walk(item, state, depth + 1));
      return out;
    }
    if (typeof node === "object" && node !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node))
        setEntry(out, key, await walk(value, state, depth + 1));
      return out;
    }
    return node;
  }

  /**
   * `walk` over a structure every expression of which readsDirectly read (`known`): the same value, charged to
   * `output` in the same order, in this turn. Such a walk's budget is never overdue, so no step asks it.
   */
  function walkKnown(node: unknown, known: ReadonlyMap<string, unknown>, output: { chars: number }): unknown {
    if (typeof node === "string") return isExpression(node) ? tally(output, known.get(node)) : node;
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (const item of node) out.push(walkKnown(item, known, output));
      return out;
    }
    if (typeof node !== "object" || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) setEntry(out, key, walkKnown(value, known, output));
    return out;
  }

  /** defineProperty: a "__proto__" key in the structure stays an ordinary key. */
  const setEntry = (out: Record<string, unknown>, key: string, value: unknown) =>
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });

  /** Whether a structure holds a string to evaluate (too deep counts: walk refuses it). */
  const hasExpression = (node: unknown, depth: number): boolean => {
    if (depth > MAX_STRUCTURE_DEPTH) return true;
    if (typeof node === "string") return isExpression(node);
    if (typeof node !== "object" || node === null) return false;
    return (Array.isArray(node) ? node : Object.values(node)).some((item) => hasExpression(item, depth + 1));
  };

  /** The renders inside one turn of a budget: each runs at once, under the turn's time limit. */
  const inTurn = (overdue: Overdue): RenderBudget => ({ run: (render) => render(overdue) });
  /** What direct reads may do outside a charged turn (one call, or one structure); inside one, no bound. */
  const uncharged = (): DirectWork => ({ left: MAX_DIRECT_WORK });
  const charged = (): DirectWork => ({ left: Number.POSITIVE_INFINITY });

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
    async outputFilters(template: string): Promise<readonly FilterUse[] | undefined> {
      const output = (await parseIn(this.budget(), template)).single?.[0];
      if (!(output instanceof Output)) return undefined;
      return output.value.filters.map((filter) => ({
        name: filter.name,
        literalArguments: filter.args.every(isLiteral),
        arguments: filter.args.map(literalValue),
      }));
    }
    async render(template: string, scope: Record<string, unknown>): Promise<string> {
      const budget = this.budget();
      // A parsed template needs no parse step: a plain path (a card's fingerprint, on every create) is read in
      // this turn.
      const hit = typeof template === "string" ? cached(template) : undefined;
      if (!hit) return renderParsed(await parseIn(budget, template), scope, budget, uncharged());
      return plainText(hit, scope, uncharged()) ?? renderTemplates(hit, scope, budget);
    }
    async evaluate(template: string, scope: Record<string, unknown>): Promise<unknown> {
      const budget = this.budget();
      return evaluateParsed(await parseIn(budget, template), scope, budget, uncharged());
    }
    async evaluateStructure(structure: unknown, scope: Record<string, unknown>): Promise<unknown> {
      const budget = this.budget();
      if (typeof structure === "string")
        return isExpression(structure)
          ? evaluateParsed(await parseIn(budget, structure), scope, budget, uncharged())
          : structure;
      const seen: DirectReads = { strings: 0, work: uncharged(), values: new Map() };
      const output = { chars: 0 };
      // Every string read directly, within MAX_DIRECT_WORK: no turn, no meter, nothing charged.
      if (!hasExpression(structure, 0) || readsDirectly(structure, scope, seen))
        return walkKnown(structure, seen.values, output);
      // One turn of the render slot and one allowance for the whole structure (a mask's strings): one wait
      // for the slot and two meter readings instead of one per string. Direct reads in it are charged with it.
      return budget.run((overdue) =>
        walk(structure, { scope, budget: inTurn(overdue), work: charged(), known: seen.values, output }, 0),
      );
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
