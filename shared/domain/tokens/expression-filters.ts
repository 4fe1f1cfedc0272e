/**
 * The filters of the token expression language (see docs/expressions.md for their exact semantics).
 * Pure functions over the token data: no I/O, no clock; randomness only in the alias filters.
 * Every error they raise is an ExpressionError whose message names the filter and the problem, never a value.
 */
import { createHmac, randomInt } from "node:crypto";
import { namesForbiddenKey } from "#shared/domain/safe-keys.ts";
import { luhnSum, luhnValid } from "./checksums.ts";
import { firstMatch, JsonPathTooCostly, MAX_JSONPATH_VISITS, parseJsonPath } from "./json-path.ts";

/** An expression problem whose message is safe to show to API callers: it never holds data or output. */
export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExpressionError";
  }
}

const MAX_NESTING = 256;

/**
 * Longest canonical JSON written: a template can hold one value at many places (liquidjs's `push` and `concat`
 * copy references), so a value of a few kilobytes can stand for gigabytes of text (review of 27 Nov 2026).
 */
export const MAX_CANONICAL_JSON_CHARS = 1_000_000;

/**
 * Canonical JSON (RFC 8785 style for JSON data): object keys sorted by UTF-16 code units at every level,
 * no whitespace, JSON number formatting, non-finite numbers and undefined array items as null, undefined and
 * function-valued object members left out. The same data always gives the same string. Refused (an expression
 * error) past MAX_CANONICAL_JSON_CHARS, counted as it is written.
 */
export function canonicalJson(value: unknown): string {
  const written = { chars: 0 };
  return canonicalPart(value, 0, written);
}

function counted(text: string, written: { chars: number }): string {
  written.chars += text.length;
  if (written.chars > MAX_CANONICAL_JSON_CHARS)
    throw new ExpressionError("stringify: the value is too large");
  return text;
}

function canonicalPart(value: unknown, depth: number, written: { chars: number }): string {
  if (depth > MAX_NESTING) throw new ExpressionError("stringify: value is nested too deeply");
  if (value === null || value === undefined || typeof value === "function" || typeof value === "symbol") {
    return "null";
  }
  if (typeof value === "string") return counted(JSON.stringify(value), written);
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  if (typeof value === "boolean" || typeof value === "bigint") return String(value);
  if (Array.isArray(value))
    return `[${value.map((item) => counted(canonicalPart(item, depth + 1, written), written)).join(",")}]`;
  const record = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof record.toJSON === "function") return canonicalPart(record.toJSON(), depth + 1, written);
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    members.push(counted(`${JSON.stringify(key)}:${canonicalPart(member, depth + 1, written)}`, written));
  }
  return `{${members.join(",")}}`;
}

// ---------------------------------------------------------------------------------------------------------
// Argument and input coercion

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Input of a string filter: null for null/undefined, scalars as strings, anything else an error. */
function text(value: unknown, filter: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  throw new ExpressionError(`${filter} expects a string`);
}

function count(value: unknown, filter: string, name: string): number {
  const n = typeof value === "string" && /^[0-9]+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new ExpressionError(`${filter}: ${name} must be a non-negative integer`);
  }
  return n;
}

function singleChar(value: unknown, filter: string, name: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || Array.from(value).length !== 1) {
    throw new ExpressionError(`${filter}: ${name} must be a single character`);
  }
  return value;
}

function flag(value: unknown, filter: string, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new ExpressionError(`${filter}: ${name} must be true or false`);
  return value;
}

/** Masks every code point of `chars` outside [keepStart, length - keepEnd); all of it when nothing would be hidden. */
function maskChars(chars: string[], keepStart: number, keepEnd: number, maskChar: string): string {
  if (keepStart + keepEnd >= chars.length) return maskChar.repeat(chars.length);
  const end = chars.length - keepEnd;
  return chars.map((c, i) => (i < keepStart || i >= end ? c : maskChar)).join("");
}

// ---------------------------------------------------------------------------------------------------------
// Cards

const CARD_MIN_DIGITS = 13;

/** The card number of a string/number or a card object's `number`: digits, spaces and hyphens only. */
function cardNumber(value: unknown, filter: string): string | null {
  const raw = isRecord(value) ? (Object.hasOwn(value, "number") ? value.number : undefined) : value;
  if (raw === null || raw === undefined) return null;
  if (typeof raw !== "string" && typeof raw !== "number") {
    throw new ExpressionError(`${filter} expects a card number or a card object`);
  }
  const number = String(raw);
  if (!/^[0-9 -]*$/.test(number)) throw new ExpressionError(`${filter} expects a card number`);
  return number;
}

const digitsOf = (number: string): string => number.replace(/[^0-9]/g, "");
const binLength = (digitCount: number): number => (digitCount >= 16 ? 8 : 6);

/** Writes `digits` over the digit positions of `template`, keeping its separators. */
function overDigits(template: string, digits: string): string {
  let i = 0;
  return template.replace(/[0-9]/g, () => digits[i++] ?? "");
}

function expirationPart(value: unknown, filter: string, name: string, max: number): number | null {
  if (value === null || value === undefined || value === "") return null;
  const n = typeof value === "string" && /^[0-9]+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < (name === "month" ? 1 : 0) || n > max) {
    throw new ExpressionError(`${filter}: invalid expiration ${name}`);
  }
  return n;
}

function cardExp(value: unknown, format: unknown = "MM/YY"): string | null {
  if (value === null || value === undefined) return null;
  if (!isRecord(value)) throw new ExpressionError("card_exp expects a card object");
  if (typeof format !== "string") throw new ExpressionError("card_exp: format must be a string");
  const month = expirationPart(value.expiration_month, "card_exp", "month", 12);
  const year = expirationPart(value.expiration_year, "card_exp", "year", 9999);
  let missing = false;
  const out = format.replace(/YYYY|YY|MM|M/g, (token) => {
    const part = token.startsWith("Y") ? year : month;
    if (part === null) {
      missing = true;
      return "";
    }
    if (token === "YYYY") return String(part).padStart(4, "0");
    if (token === "YY") return String(part % 100).padStart(2, "0");
    return token === "MM" ? String(part).padStart(2, "0") : String(part);
  });
  return missing ? null : out;
}

function cardMask(
  value: unknown,
  revealBin: unknown,
  revealLast4: unknown,
  maskChar: unknown,
): string | null {
  const bin = flag(revealBin, "card_mask", "reveal_bin", false);
  const last4 = flag(revealLast4, "card_mask", "reveal_last4", true);
  const mask = singleChar(maskChar, "card_mask", "mask_char", "X");
  const number = cardNumber(value, "card_mask");
  if (number === null) return null;
  const total = digitsOf(number).length;
  const keepStart = total >= CARD_MIN_DIGITS && bin ? binLength(total) : 0;
  const keepEnd = total >= CARD_MIN_DIGITS && last4 ? 4 : 0;
  let i = 0;
  return number.replace(/[0-9]/g, (d) => {
    const index = i++;
    return index < keepStart || index >= total - keepEnd ? d : mask;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Random aliases (node:crypto randomInt: uniform, cryptographically strong)

const DIGITS = "0123456789";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const ALPHANUMERIC = UPPER + LOWER + DIGITS;
/** Attempts at drawing an alias different from the input before accepting an equal one (only tiny inputs). */
const ALIAS_ATTEMPTS = 32;

const pick = (alphabet: string): string => alphabet.charAt(randomInt(alphabet.length));
const randomDigits = (n: number): string => Array.from({ length: n }, () => pick(DIGITS)).join("");

function distinctFrom(input: string, draw: () => string): string {
  let alias = draw();
  for (let attempt = 1; alias === input && attempt < ALIAS_ATTEMPTS; attempt++) alias = draw();
  return alias;
}

function preserveFormat(input: string): string {
  return Array.from(input, (c) => {
    if (/\p{Lu}/u.test(c)) return pick(UPPER);
    if (/\p{L}/u.test(c)) return pick(LOWER);
    if (/\p{Nd}/u.test(c)) return pick(DIGITS);
    return c;
  }).join("");
}

/** A random digit string of `length` that passes Luhn, starting with `prefix` and ending with `suffix`. */
function luhnDigits(length: number, prefix: string, suffix: string): string {
  if (length === 0) return "";
  if (suffix === "") {
    // Free body, computed check digit.
    const body = prefix + randomDigits(length - 1 - prefix.length);
    return body + String((10 - (luhnSum(body, true) % 10)) % 10);
  }
  // Fixed last digits: the last free digit is solved for (each position maps digits to residues one to one).
  const free = length - prefix.length - suffix.length;
  const head = prefix + randomDigits(free - 1);
  for (let d = 0; d <= 9; d++) {
    const candidate = `${head}${d}${suffix}`;
    if (luhnValid(candidate)) return candidate;
  }
  throw new ExpressionError("alias_card could not build a valid number");
}

function aliasCard(value: unknown): string | null {
  const number = cardNumber(value, "alias_card");
  if (number === null) return null;
  const digits = digitsOf(number);
  const draw =
    digits.length >= CARD_MIN_DIGITS
      ? () => luhnDigits(digits.length, digits.slice(0, 6), digits.slice(-4))
      : () => luhnDigits(digits.length, "", "");
  return overDigits(number, distinctFrom(digits, draw));
}

// ---------------------------------------------------------------------------------------------------------
// JSONPath

function jsonPath(value: unknown, path: unknown): unknown {
  if (typeof path !== "string" || path.trim() === "")
    throw new ExpressionError("json expects a JSONPath string");
  // The walk follows own properties only; a path naming the prototype machinery is refused outright.
  if (namesForbiddenKey(path))
    throw new ExpressionError("json: a JSONPath must not name __proto__, prototype or constructor");
  if (/[()?@]/.test(path))
    throw new ExpressionError("json: script expressions are not allowed in a JSONPath");
  const parsed = parseJsonPath(path.trim());
  if (!parsed)
    throw new ExpressionError(
      "json: this JSONPath is not supported (up to 32 names, indexes and wildcards, with at most one `..`)",
    );
  if (value === null || value === undefined) return null;
  let json: unknown = value;
  if (typeof value === "string") {
    try {
      json = JSON.parse(value);
    } catch {
      throw new ExpressionError("json expects an object or a JSON string");
    }
  }
  if (json === null || typeof json !== "object") return parsed.steps.length === 0 ? json : null;
  try {
    return firstMatch(json, parsed) ?? null;
  } catch (error) {
    if (error instanceof JsonPathTooCostly)
      throw new ExpressionError(
        `json: the JSONPath visits more than ${MAX_JSONPATH_VISITS} values of the data`,
      );
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Conversions

function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(trimmed)) return null;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : null;
}

function toBoolean(value: unknown): boolean | null {
  if (typeof value === "boolean") return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== "string") return null;
  const normalized = value.trim().toLowerCase();
  if (normalized === "true" || normalized === "1") return true;
  if (normalized === "false" || normalized === "0") return false;
  return null;
}

function toStringValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "object") return canonicalJson(value);
  return String(value);
}

const HMAC_ALGORITHMS = new Set([
  "sha1",
  "sha224",
  "sha256",
  "sha384",
  "sha512",
  "sha3-256",
  "sha3-384",
  "sha3-512",
]);

function hmac(value: unknown, secret: unknown, algorithm: unknown = "sha256"): string | null {
  const key = typeof secret === "number" ? String(secret) : secret;
  if (typeof key !== "string" || key === "") throw new ExpressionError("hmac expects a non-empty secret");
  const alg = typeof algorithm === "string" ? algorithm.toLowerCase() : "";
  if (!HMAC_ALGORITHMS.has(alg)) throw new ExpressionError("hmac: unsupported algorithm");
  const input = text(value, "hmac");
  return input === null ? null : createHmac(alg, key).update(input, "utf8").digest("hex");
}

// ---------------------------------------------------------------------------------------------------------
// Registry

/** What a filter may charge its allocations to (liquidjs's per-render memory limiter). */
export interface FilterBudget {
  use(units: number): void;
}

export interface FilterDefinition {
  /** Fewest and most arguments after the input. */
  arity: [number, number];
  apply(budget: FilterBudget, input: unknown, args: unknown[]): unknown;
}

export interface FilterLimits {
  /** Upper bound for lengths a filter is asked to produce (pad lengths). */
  maxOutputChars: number;
}

function pad(side: "left" | "right", limits: FilterLimits) {
  const filter = `pad_${side}`;
  return (budget: FilterBudget, input: unknown, [length, char]: unknown[]): string | null => {
    const target = count(length, filter, "length");
    if (target > limits.maxOutputChars)
      throw new ExpressionError(`${filter}: length exceeds the output limit`);
    const fill = singleChar(char, filter, "char", " ");
    const value = text(input, filter);
    if (value === null) return null;
    const missing = target - Array.from(value).length;
    if (missing <= 0) return value;
    budget.use(missing);
    return side === "left" ? fill.repeat(missing) + value : value + fill.repeat(missing);
  };
}

/** The filters by name. Arguments are positional; see docs/expressions.md. */
export function expressionFilters(limits: FilterLimits): Record<string, FilterDefinition> {
  const stringify: FilterDefinition = {
    arity: [0, 0],
    apply: (budget, input) => {
      const json = canonicalJson(input);
      budget.use(json.length);
      return json;
    },
  };
  return {
    reveal_last: {
      arity: [1, 2],
      apply: (_budget, input, [n, maskChar]) => {
        const keep = count(n, "reveal_last", "count");
        const mask = singleChar(maskChar, "reveal_last", "mask_char", "X");
        const value = text(input, "reveal_last");
        return value === null ? null : maskChars(Array.from(value), 0, keep, mask);
      },
    },
    reveal: {
      arity: [1, 3],
      apply: (_budget, input, [first, last, maskChar]) => {
        const keepStart = count(first, "reveal", "first_n");
        const keepEnd = last === undefined ? 0 : count(last, "reveal", "last_n");
        const mask = singleChar(maskChar, "reveal", "mask_char", "X");
        const value = text(input, "reveal");
        return value === null ? null : maskChars(Array.from(value), keepStart, keepEnd, mask);
      },
    },
    last4: {
      arity: [0, 0],
      apply: (_budget, input) => {
        const value = text(input, "last4");
        return value === null ? null : Array.from(value).slice(-4).join("");
      },
    },
    pad_left: { arity: [1, 2], apply: pad("left", limits) },
    pad_right: { arity: [1, 2], apply: pad("right", limits) },
    json: { arity: [1, 1], apply: (_budget, input, [path]) => jsonPath(input, path) },
    stringify,
    json_stringify: stringify,
    card_bin: {
      arity: [0, 0],
      apply: (_budget, input) => {
        const number = cardNumber(input, "card_bin");
        if (number === null) return null;
        const digits = digitsOf(number);
        return digits.length < CARD_MIN_DIGITS ? null : digits.slice(0, binLength(digits.length));
      },
    },
    card_exp: { arity: [0, 1], apply: (_budget, input, [format]) => cardExp(input, format) },
    card_mask: {
      arity: [0, 3],
      apply: (_budget, input, [revealBin, revealLast4, maskChar]) =>
        cardMask(input, revealBin, revealLast4, maskChar),
    },
    hmac: { arity: [1, 2], apply: (_budget, input, [secret, algorithm]) => hmac(input, secret, algorithm) },
    to_base64: {
      arity: [0, 0],
      apply: (budget, input) => {
        const value = text(input, "to_base64");
        if (value === null) return null;
        budget.use(value.length * 2);
        return Buffer.from(value, "utf8").toString("base64");
      },
    },
    to_base16: {
      arity: [0, 0],
      apply: (budget, input) => {
        const value = text(input, "to_base16");
        if (value === null) return null;
        budget.use(value.length * 3);
        return Buffer.from(value, "utf8").toString("hex");
      },
    },
    to_string: {
      arity: [0, 0],
      apply: (budget, input) => {
        const value = toStringValue(input);
        if (value !== null) budget.use(value.length);
        return value;
      },
    },
    to_number: { arity: [0, 0], apply: (_budget, input) => toNumber(input) },
    to_boolean: { arity: [0, 0], apply: (_budget, input) => toBoolean(input) },
    alias_preserve_format: {
      arity: [0, 0],
      apply: (budget, input) => {
        const value = text(input, "alias_preserve_format");
        if (value === null) return null;
        budget.use(value.length);
        if (!/[\p{L}\p{Nd}]/u.test(value)) return value;
        return distinctFrom(value, () => preserveFormat(value));
      },
    },
    alias_preserve_length: {
      arity: [0, 0],
      apply: (budget, input) => {
        const value = text(input, "alias_preserve_length");
        if (value === null) return null;
        const length = Array.from(value).length;
        budget.use(length);
        return distinctFrom(value, () => Array.from({ length }, () => pick(ALPHANUMERIC)).join(""));
      },
    },
    alias_card: { arity: [0, 0], apply: (_budget, input) => aliasCard(input) },
  };
}
