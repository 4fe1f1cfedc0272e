/**
 * Card input rules, run inside the frame (and unit-tested in Node): brand detection, Luhn, masks and expiry.
 * Pure functions of their input (and of "now" for expiry), no DOM.
 */

export type CardBrand =
  | "visa"
  | "mastercard"
  | "american-express"
  | "discover"
  | "diners-club"
  | "jcb"
  | "unionpay"
  | "maestro"
  | "unknown";

interface BrandRule {
  brand: CardBrand;
  /** Prefix test on the digits typed so far. */
  prefix: RegExp;
  lengths: number[];
  /** Positions after which the mask puts a space. */
  gaps: number[];
  cvcLength: number;
}

// Most specific first: the first rule whose prefix matches wins.
const BRANDS: BrandRule[] = [
  { brand: "american-express", prefix: /^3[47]/, lengths: [15], gaps: [4, 10], cvcLength: 4 },
  { brand: "diners-club", prefix: /^3(?:0[0-5]|[689])/, lengths: [14, 16, 19], gaps: [4, 10], cvcLength: 3 },
  {
    brand: "jcb",
    prefix: /^35(?:2[89]|[3-8])/,
    lengths: [16, 17, 18, 19],
    gaps: [4, 8, 12, 16],
    cvcLength: 3,
  },
  {
    brand: "discover",
    prefix: /^(?:6011|64[4-9]|65)/,
    lengths: [16, 19],
    gaps: [4, 8, 12, 16],
    cvcLength: 3,
  },
  { brand: "unionpay", prefix: /^62/, lengths: [16, 17, 18, 19], gaps: [4, 8, 12, 16], cvcLength: 3 },
  {
    brand: "mastercard",
    prefix: /^(?:5[1-5]|2(?:2[2-9]|[3-6]|7[01]|720))/,
    lengths: [16],
    gaps: [4, 8, 12, 16],
    cvcLength: 3,
  },
  {
    brand: "maestro",
    prefix: /^(?:5[06-9]|6[37])/,
    lengths: [12, 13, 14, 15, 16, 17, 18, 19],
    gaps: [4, 8, 12, 16],
    cvcLength: 3,
  },
  { brand: "visa", prefix: /^4/, lengths: [13, 16, 19], gaps: [4, 8, 12, 16], cvcLength: 3 },
];

const UNKNOWN: BrandRule = {
  brand: "unknown",
  prefix: /^/,
  lengths: [12, 13, 14, 15, 16, 17, 18, 19],
  gaps: [4, 8, 12, 16],
  cvcLength: 3,
};

export const digitsOf = (value: string) => value.replace(/\D/g, "");

function ruleOf(digits: string): BrandRule {
  return BRANDS.find((rule) => rule.prefix.test(digits)) ?? UNKNOWN;
}

export function cardBrand(digits: string): CardBrand {
  return digits.length === 0 ? "unknown" : ruleOf(digits).brand;
}

export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export const maxNumberLength = (digits: string) => Math.max(...ruleOf(digits).lengths);
export const cvcLengthFor = (digits: string) => ruleOf(digits).cvcLength;

/** The number as shown while typing: digits only, cut at the brand's longest length, grouped by its gaps. */
export function formatNumber(value: string): string {
  const rule = ruleOf(digitsOf(value));
  const digits = digitsOf(value).slice(0, Math.max(...rule.lengths));
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (rule.gaps.includes(i)) out += " ";
    out += digits[i];
  }
  return out;
}

export interface FieldCheck {
  empty: boolean;
  complete: boolean;
  valid: boolean;
  /** Shown to the user (and in change events): never holds the value. */
  error?: string;
  /**
   * A number of a length its brand allows but shorter than 16 digits (or than the brand's longest, if that is
   * shorter): the person is most likely still typing, and whether such a prefix passes Luhn is a fact about
   * digits the page must not learn (front-end review, 28 Nov 2026). While its field has focus, change events tell
   * it as neither complete nor valid; once the field is left, as it is.
   */
  provisional?: boolean;
}

/** Below this many digits a number its brand allows is provisional while typed (FieldCheck.provisional). */
const SETTLED_DIGITS = 16;

export function checkNumber(value: string): FieldCheck & { brand: CardBrand } {
  const digits = digitsOf(value);
  const rule = ruleOf(digits);
  const brand = cardBrand(digits);
  if (digits.length === 0) return { empty: true, complete: false, valid: false, brand };
  const longEnough = rule.lengths.includes(digits.length);
  const atMax = digits.length >= Math.max(...rule.lengths);
  const provisional = digits.length < Math.min(SETTLED_DIGITS, Math.max(...rule.lengths));
  if (!longEnough)
    return atMax
      ? { empty: false, complete: false, valid: false, brand, error: "The card number is invalid." }
      : { empty: false, complete: false, valid: false, brand, error: "The card number is incomplete." };
  if (!luhnValid(digits))
    return {
      empty: false,
      complete: atMax,
      valid: false,
      brand,
      error: "The card number is invalid.",
      ...(provisional ? { provisional } : {}),
    };
  return { empty: false, complete: true, valid: true, brand, ...(provisional ? { provisional } : {}) };
}

/** Expiry as shown while typing: `MM / YY` (a lone first digit above 1 becomes `0d`). */
export function formatExpiry(value: string): string {
  let digits = digitsOf(value);
  if (digits.length === 1 && Number(digits) > 1) digits = `0${digits}`;
  digits = digits.slice(0, 4);
  return digits.length > 2 ? `${digits.slice(0, 2)} / ${digits.slice(2)}` : digits;
}

export interface Expiry {
  month: number;
  /** Four digits. */
  year: number;
}

export function parseExpiry(value: string): Expiry | undefined {
  const digits = digitsOf(value);
  if (digits.length !== 4) return undefined;
  return { month: Number(digits.slice(0, 2)), year: 2000 + Number(digits.slice(2)) };
}

export function checkExpiry(value: string, now: Date): FieldCheck {
  const digits = digitsOf(value);
  if (digits.length === 0) return { empty: true, complete: false, valid: false };
  const expiry = parseExpiry(value);
  const month = Number(digits.slice(0, 2));
  if (digits.length >= 2 && (month < 1 || month > 12))
    return { empty: false, complete: false, valid: false, error: "The expiration month is invalid." };
  if (!expiry)
    return { empty: false, complete: false, valid: false, error: "The expiration date is incomplete." };
  // Valid through the last day of its month.
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
  const expires = expiry.year * 12 + (expiry.month - 1);
  if (expires < current)
    return { empty: false, complete: true, valid: false, error: "The card has expired." };
  if (expires > current + 50 * 12)
    return { empty: false, complete: true, valid: false, error: "The expiration year is invalid." };
  return { empty: false, complete: true, valid: true };
}

export function formatCvc(value: string, numberDigits: string): string {
  return digitsOf(value).slice(0, Math.max(4, cvcLengthFor(numberDigits)));
}

export function checkCvc(value: string, numberDigits: string): FieldCheck {
  const digits = digitsOf(value);
  if (digits.length === 0) return { empty: true, complete: false, valid: false };
  const wanted = numberDigits.length > 0 ? [cvcLengthFor(numberDigits)] : [3, 4];
  if (wanted.includes(digits.length)) return { empty: false, complete: true, valid: true };
  return digits.length > Math.max(...wanted)
    ? { empty: false, complete: true, valid: false, error: "The security code is invalid." }
    : { empty: false, complete: false, valid: false, error: "The security code is incomplete." };
}
