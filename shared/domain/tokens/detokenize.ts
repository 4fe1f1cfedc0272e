import type { Transform } from "#shared/domain/access-rules.ts";
import { DomainError } from "#shared/domain/errors.ts";
import { noteDataRead } from "#shared/domain/idempotency-scope.ts";
import { isPlainObject } from "#shared/domain/merge-patch.ts";
import { countTokens } from "#shared/observability/count-tokens.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import type { TokenAccess } from "./access.ts";
import type { TokenDeps } from "./deps.ts";
import { ExpressionError, type FilterUse } from "./expressions.ts";
import { parseJsonPath } from "./json-path.ts";
import { openData } from "./sealing.ts";
import { callerVersion, isExpired, type StoredToken } from "./token.ts";

/**
 * Detokenization expressions: `{{ <id> }}` and `{{ token: <id> | <filters> }}` (filters as in Liquid). The id
 * stops at whitespace, `|`, `{` or `}` (token ids never hold those); the filters hold no `{` or `}`. So from any
 * `{{` a match attempt ends at the next brace, and finding every expression is linear in the text: where the id
 * and filters could hold `{`, an attempt from every `{{` of a body such as `{{{{…` or `{{a|{{a|…` ran to the end
 * and back, and a 60 KB /proxy body held the process for 15 s.
 */
const EXPRESSION = /\{\{\s*(?:token\s*:\s*)?([^\s|{}]+)\s*((?:\|[^{}]*)?)\}\}/g;
const WHOLE = new RegExp(`^\\s*${EXPRESSION.source}\\s*$`);

/** One detokenization expression in a text: its token id and filters, and where it is. */
interface Found extends Reference {
  start: number;
  end: number;
}

function expressionsIn(text: string): Found[] {
  return [...text.matchAll(EXPRESSION)].map((m) => ({
    id: m[1] as string,
    filters: (m[2] ?? "").trim(),
    start: m.index,
    end: m.index + m[0].length,
  }));
}

/** At most this many distinct tokens per request (the spec's reactor limit, applied to proxies too). */
export const MAX_DETOKENIZED = 100;
/** At most this many detokenization expressions per request (every occurrence counts). */
export const MAX_EXPRESSIONS = 1_000;
/** At most this many bytes of detokenized values (UTF-8, as inserted, every occurrence counted) per request. */
export const MAX_DETOKENIZED_BYTES = 1024 * 1024;

export class DetokenizeError extends DomainError {}

const unknownToken = (id: string) =>
  new DetokenizeError(
    "invalid",
    `The token ${JSON.stringify(id)} in a detokenization expression does not exist.`,
    { code: "unknown-token" },
  );
const forbiddenToken = (id: string, permission: DetokenizePermission) =>
  new DetokenizeError(
    "forbidden",
    `The key may not ${permission === "token:read" ? "read" : "use"} the token ${JSON.stringify(id)} (${permission} on its container).`,
  );

/** The permission whose rule decides what a token shows: token:use (proxies, reactors) or token:read. */
export type DetokenizePermission = "token:use" | "token:read";

const tooManyTokens = () =>
  new DetokenizeError("invalid", `At most ${MAX_DETOKENIZED} tokens can be detokenized per request.`, {
    code: "too-many-tokens",
  });
const tooManyExpressions = () =>
  new DetokenizeError(
    "invalid",
    `At most ${MAX_EXPRESSIONS} detokenization expressions are replaced per request.`,
    { code: "too-many-expressions" },
  );
const tooMuchOutput = () =>
  new DetokenizeError(
    "invalid",
    `Detokenization may produce at most ${MAX_DETOKENIZED_BYTES} bytes per request.`,
    { code: "detokenized-too-large" },
  );
/**
 * Filters and masks run on token data: whatever failed, and whatever the data was, the answer is this one
 * (a message or status that depended on the data would let the caller read it bit by bit).
 */
const evaluationFailed = () =>
  new DetokenizeError("invalid", "A detokenization expression could not be evaluated on the token's data.", {
    code: "invalid-expression",
  });

interface Reference {
  id: string;
  filters: string;
}

/**
 * The filters that only format a value: what they give follows from the value's length and shape, never from a
 * choice the caller makes about its characters. A caller who may use a token but not read what it uses (a proxy
 * key, a key with token:use alone) applies only these to its data, each with literal arguments. With Liquid's
 * others (replace, slice, remove, times, default…) its expression decided, character by character, whether the
 * output outgrew the request's limit (400, nothing sent) or went to the destination, and any destination's answer
 * could carry the same bit: a card number read back in 80 requests (proxies review, 28 Nov 2026).
 */
export const FORMATTING_FILTERS: ReadonlySet<string> = new Set([
  "reveal",
  "reveal_last",
  "last4",
  "pad_left",
  "pad_right",
  "json",
  "stringify",
  "json_stringify",
  "card_bin",
  "card_exp",
  "card_mask",
  "to_string",
  "alias_preserve_format",
  "alias_preserve_length",
  "alias_card",
  "url_encode",
  "escape",
  "append",
  "prepend",
]);

/**
 * Not formatting, though they look it (review of 28 Nov 2026, round 4): each character a formatting filter sends is
 * a character of the data at a fixed place, a constant, or the caller's own. `hmac` with a key of the caller's is a
 * new function of the whole value at every request: a destination that only validates (parseInt of exp_month in
 * 1..12) answered a fresh bit of it each time, and 12 requests picked the 4 digits between card_mask's BIN and last
 * four out of 1,000. `to_base64` and `to_base16` mix bits of several characters into one, so whether an output
 * character is a digit depends on the data: a destination that strips non-digits received digits 3, 6, 9, 12 and 15
 * (less 4) exactly where they were 4 or more, a mask of the data's own choosing. They need token:read.
 */

/** Filters that read the value before them (the token's data, or what `json` took from it). */
const DATA_FILTERS: ReadonlySet<string> = new Set(
  [...FORMATTING_FILTERS].filter(
    (name) => !["json", "append", "prepend", "url_encode", "escape"].includes(name),
  ),
);
/** What may follow: text joined to the value or escaped, read by no filter after it. */
const DECORATIONS: ReadonlySet<string> = new Set(["append", "prepend", "url_encode", "escape"]);
/** The mask character's place among a filter's arguments. */
const MASK_ARGUMENT: Readonly<Record<string, number>> = { reveal: 2, reveal_last: 1, card_mask: 2 };
/** Characters a destination may read as part of a number, or drop from one (digits, spaces, dashes). */
const NUMBER_LIKE = /[\p{N}\p{Z}\p{Pd}\s]/u;

/** A JSONPath that names members only: an index (`[3]`, `.3`, `['3']`) picks a character out of a string. */
function membersOnly(path: unknown): boolean {
  const parsed = typeof path === "string" ? parseJsonPath(path.trim()) : undefined;
  return !!parsed && parsed.steps.every((step) => step.kind === "all" || !/^[0-9]+$/.test(step.name));
}

/** The token types whose data is always an object (types.ts): `json` reads their fields without parsing text. */
const OBJECT_TYPES: ReadonlySet<string> = new Set(["card", "bank"]);

/** Number of a count argument as the filters read it (an integer or a string of digits), else undefined. */
const countOf = (value: unknown): number | undefined =>
  typeof value === "number"
    ? value
    : typeof value === "string" && /^[0-9]+$/.test(value.trim())
      ? Number(value.trim())
      : undefined;

/**
 * Which characters of the data a use-only caller may send apart from the rest: fixed places, never places of its
 * choosing. `reveal: k, 0, <mask>` for k = 1…15 with a digit of the caller's in front put the first k digits alone in
 * a number for a Luhn-checking destination to sum, one digit a step, whatever the mask character: one a format ends
 * a field at (`&` in a form body: `number=0c{{ … | reveal: k, 0, '&' }}`) or a destination's normalizer drops
 * (U+001C–U+001F are whitespace to Python and Java, U+0085 to Python and .NET, every non-digit to a `\D` strip):
 * a card read back in ~80 requests (review of 28 Nov 2026, round 3). With places fixed (the last four, card_mask's
 * BIN and last four), such a destination answers sums of those digits only, and no mask character matters.
 * card_exp's `M` is one or two characters (its length tells month ≥ 10): only fixed-width parts.
 */
function fixedPlaces(filter: FilterUse): boolean {
  const [first, second] = filter.arguments;
  if (filter.name === "reveal")
    return countOf(first) === 0 && (second === undefined || [0, 4].includes(countOf(second) ?? -1));
  if (filter.name === "reveal_last") return [0, 4].includes(countOf(first) ?? -1);
  if (filter.name === "card_exp")
    return (
      first === undefined ||
      (typeof first === "string" && ![...first.matchAll(/YYYY|YY|MM|M/g)].some((m) => m[0] === "M"))
    );
  return true;
}

/**
 * Whether a use-only caller's filters only format the token's data: at most `json` (member names only) first, then
 * at most one other formatting filter, then only decorations (append, prepend, url_encode, escape); every argument
 * a positional literal, a mask character neither a digit, a space nor a dash. A filter run on another's output
 * computes on the data: `prepend: '["' | append: '"]' | json: '$[0][i]' | prepend: '1e' | json: '$'` wrote
 * character i as 10^i (its value as a length, against the 1 MiB limit), `reveal: i+1 | hmac: '<key>' | reveal:
 * 0, 1, '0' | card_mask` failed on a bit of a keyed hash of the first i+1 characters, and `reveal: n, 0, '0'` with
 * a check digit of the caller's made a Luhn-checking destination answer the first n digits' sum (review of 28
 * Nov 2026).
 */
export function formatsOnly(filters: readonly FilterUse[]): boolean {
  let at = 0;
  if (filters[0]?.name === "json") {
    if (!membersOnly(filters[0].arguments[0])) return false;
    at = 1;
  }
  if (at < filters.length && DATA_FILTERS.has(filters[at]?.name ?? "")) at++;
  for (; at < filters.length; at++) if (!DECORATIONS.has(filters[at]?.name ?? "")) return false;
  return filters.every((filter) => {
    if (!filter.literalArguments || !fixedPlaces(filter)) return false;
    const place = MASK_ARGUMENT[filter.name];
    const mask = place === undefined ? undefined : filter.arguments[place];
    return typeof mask !== "string" || !NUMBER_LIKE.test(mask);
  });
}

const filterNeedsRead = (id: string) =>
  new DetokenizeError(
    "forbidden",
    `The key may use the token ${JSON.stringify(id)} but not read it: on its data it may apply only formatting filters (${[...FORMATTING_FILTERS].join(", ")}), with literal arguments: at most json (member names only) first, then one other, then append, prepend, url_encode or escape; a mask character that is not a digit, space or dash; reveal and reveal_last showing at most the last four characters (card_mask for the BIN); card_exp without a bare M. Others (hmac, to_base64, to_base16 among them) need token:read that reveals the token.`,
    { code: "filter-needs-read" },
  );

const filterTemplate = (ref: Reference) => `{{ data ${ref.filters} }}`;

function referencesIn(text: string): Reference[] {
  return expressionsIn(text).map(({ id, filters }) => ({ id, filters }));
}

/** Every expression in a JSON value's strings (keys are left alone), or in a text. */
export function findReferences(value: unknown): Reference[] {
  if (typeof value === "string") return referencesIn(value);
  if (Array.isArray(value)) return value.flatMap(findReferences);
  if (isPlainObject(value)) return Object.values(value).flatMap(findReferences);
  return [];
}

export interface Detokenizer {
  /** Replaces expressions in a JSON value: a string that is exactly one expression becomes the token's value. */
  json(value: unknown): Promise<unknown>;
  /** Replaces expressions in a text; objects are written as JSON. */
  text(value: string): Promise<string>;
}

/**
 * Records that `tokens` are about to be used (audit-entry.ts recordTokenReads, or the proxy's own writer);
 * rejects when that cannot be written, and then nothing is detokenized.
 */
export type UseAudit = (tokens: readonly StoredToken[]) => Promise<void>;

/**
 * Resolves tokens for one request: each once, checked for `permission` (token:use unless said) on its container
 * with the caller's access, its data transformed as that access says (reveal, mask, or nothing for redact), then
 * the filters applied. Fail closed: every `json`/`text` call hands its tokens to `audit`, and opens no data (nor
 * answers any value) until that has resolved; an audit that rejects rejects the call.
 */
export function createDetokenizer(
  deps: TokenDeps,
  tenantId: string,
  access: TokenAccess,
  audit: UseAudit,
  permission: DetokenizePermission = "token:use",
): Detokenizer {
  const tokens = new Map<string, Promise<{ token: StoredToken; transform: Transform }>>();
  const usedTokens: StoredToken[] = [];
  const audited = new Set<string>();
  const shownData = new Map<string, Promise<unknown>>();
  const values = new Map<string, Promise<unknown>>();

  /** The token and the caller's transform for token:use on it; no data is opened yet. */
  const load = (id: string) => {
    let pending = tokens.get(id);
    if (!pending) {
      if (tokens.size >= MAX_DETOKENIZED) throw tooManyTokens();
      pending = (async () => {
        const token = await deps.tokens.get(tenantId, id);
        if (!token || isExpired(token, deps.clock.now()) || token.lock?.operation === "create")
          throw unknownToken(id);
        const transform = access.evaluate(token, permission);
        if (!transform) throw forbiddenToken(id, permission);
        usedTokens.push(token);
        countTokens(deps, METRIC.tokensDetokenized, tenantId);
        return { token, transform };
      })();
      tokens.set(id, pending);
    }
    return pending;
  };

  /** The token's data as the caller's transform shows it (reveal, mask, or null for redact). */
  const dataOf = (id: string) => {
    let pending = shownData.get(id);
    if (!pending) {
      pending = load(id).then(async ({ token, transform }) => {
        if (transform === "redact") return null;
        const plain = await openData(deps, token);
        // An idempotent answer computed from this data is replayed only while the data lives (idempotency-scope.ts).
        noteDataRead({
          id: token.id,
          version: callerVersion(token),
          // A card's cvc, sealed apart and gone after its hour; another type's `cvc` field is data like any other.
          cvc:
            token.sealed_cvc !== undefined && typeof plain === "object" && plain !== null && "cvc" in plain,
          created: token.created_at,
        });
        if (transform === "reveal") return plain;
        if (token.mask === undefined) return null;
        try {
          return await deps.expressions.evaluateStructure(token.mask, { data: plain });
        } catch (error) {
          if (error instanceof ExpressionError) throw evaluationFailed();
          throw error;
        }
      });
      shownData.set(id, pending);
    }
    return pending;
  };

  const resolve = (ref: Reference): Promise<unknown> => {
    const key = `${ref.id}\u0000${ref.filters}`;
    let pending = values.get(key);
    if (!pending) {
      pending = dataOf(ref.id).then(async (data) => {
        if (!ref.filters) return data;
        try {
          return await deps.expressions.evaluate(filterTemplate(ref), { data });
        } catch (error) {
          if (error instanceof ExpressionError) throw evaluationFailed();
          throw error;
        }
      });
      values.set(key, pending);
    }
    return pending;
  };

  /**
   * A caller who cannot read what it uses (its token:read shows the token otherwise than its use) formats it
   * only (FORMATTING_FILTERS). Decided by its access and the expression alone, before any data is opened.
   */
  const checked = new Set<string>();
  const checkFilters = async (ref: Reference) => {
    const key = `${ref.id}\u0000${ref.filters}`;
    if (!ref.filters || permission === "token:read" || checked.has(key)) return;
    const { token, transform } = await load(ref.id);
    const read = access.evaluate(token, "token:read");
    if (read !== "reveal" && read !== transform) {
      const filters = await deps.expressions.outputFilters(filterTemplate(ref));
      if (!filters?.every((filter) => FORMATTING_FILTERS.has(filter.name)) || !formatsOnly(filters))
        throw filterNeedsRead(ref.id);
      // `json` parses a string as JSON, which fails or not by its characters ("0123" fails, "1123" parses: a bit of
      // the data, round 3): only on the types whose data is an object (its fields picked by name).
      if (filters[0]?.name === "json" && !OBJECT_TYPES.has(token.type)) throw filterNeedsRead(ref.id);
    }
    checked.add(key);
  };

  let expressionCount = 0;
  let outputBytes = 0;
  /** Counts a request's expressions and checks their filters' syntax. */
  const admit = async (refs: Reference[]) => {
    expressionCount += refs.length;
    if (expressionCount > MAX_EXPRESSIONS) throw tooManyExpressions();
    for (const ref of refs) {
      if (!ref.filters) continue;
      try {
        await deps.expressions.validate(filterTemplate(ref));
      } catch (error) {
        // Syntax only: the same for any data, so the parser's message may be shown.
        if (error instanceof ExpressionError)
          throw new DetokenizeError("invalid", `A detokenization expression is invalid: ${error.message}`, {
            code: "invalid-expression",
          });
        throw error;
      }
    }
  };
  /** Charges a value's bytes, as inserted, to the request's output budget. */
  const charge = <T>(value: T, size: number): T => {
    outputBytes += size;
    if (outputBytes > MAX_DETOKENIZED_BYTES) throw tooMuchOutput();
    return value;
  };

  const asText = (value: unknown) =>
    value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);

  /**
   * A reference's value as inserted (text inside a string, or JSON for a whole value) and its bytes: made once
   * per reference, however often it occurs. Each occurrence serialised the value again before its charge, so
   * 1,000 occurrences of one 6 MB masked value built 6 GB before the 1 MiB limit refused (amplification review).
   */
  const insertions = new Map<string, { text: string; bytes: number }>();
  const inserted = async (ref: Reference, as: "text" | "json") => {
    const key = `${as}\u0000${ref.id}\u0000${ref.filters}`;
    let known = insertions.get(key);
    if (!known) {
      const value = await resolve(ref);
      const text = as === "text" ? asText(value) : (JSON.stringify(value) ?? "");
      known = { text, bytes: Buffer.byteLength(text, "utf8") };
      insertions.set(key, known);
    }
    return known;
  };

  // One expression at a time, each charged as it comes: the first past the limit ends the request's work.
  const replaceIn = async (text: string, found = expressionsIn(text)): Promise<string> => {
    if (found.length === 0) return text;
    let out = "";
    let from = 0;
    for (const expression of found) {
      const { text: value, bytes } = await inserted(expression, "text");
      out += text.slice(from, expression.start) + charge(value, bytes);
      from = expression.end;
    }
    return out + text.slice(from);
  };

  const replaceJson = async (value: unknown): Promise<unknown> => {
    if (typeof value === "string") {
      const whole = WHOLE.exec(value);
      if (whole) {
        const ref = { id: whole[1] as string, filters: (whole[2] ?? "").trim() };
        charge(undefined, (await inserted(ref, "json")).bytes);
        return resolve(ref);
      }
      return replaceIn(value);
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const item of value) out.push(await replaceJson(item));
      return out;
    }
    if (isPlainObject(value)) {
      const out: [string, unknown][] = [];
      for (const [k, v] of Object.entries(value)) out.push([k, await replaceJson(v)]);
      return Object.fromEntries(out);
    }
    return value;
  };

  /**
   * Before anything runs on data: the request's limits and filter syntax, then every token loaded and its
   * access checked, so an unknown or forbidden token answers the same whatever another token's data is.
   */
  const prepare = async (refs: Reference[]) => {
    await admit(refs);
    const fresh = [...new Set(refs.map((ref) => ref.id))].filter((id) => !tokens.has(id));
    if (tokens.size + fresh.length > MAX_DETOKENIZED) throw tooManyTokens();
    // Every load settles (none left rejecting unobserved); the first failure in the request's order answers.
    const outcomes = await Promise.allSettled(fresh.map(load));
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
    for (const ref of refs) await checkFilters(ref);
    // Every token this call uses is recorded before any of their data is opened.
    const unrecorded = usedTokens.filter((token) => !audited.has(token.id));
    await audit(unrecorded);
    for (const token of unrecorded) audited.add(token.id);
  };

  return {
    json: async (value) => {
      await prepare(findReferences(value));
      return replaceJson(value);
    },
    text: async (value) => {
      await prepare(referencesIn(value));
      return replaceIn(value);
    },
  };
}
