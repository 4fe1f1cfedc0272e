import * as z from "zod";
import { FieldErrorList } from "../field-errors.ts";
import { abaValid, luhnValid } from "./checksums.ts";

/**
 * The token type catalogue (docs/tokens.md, "Types"): default container, default mask, default fingerprint expression
 * and the data validation of each type.
 */
const cardNumber = z
  .string()
  .regex(/^\d{12,19}$/, "must be 12 to 19 digits without separators")
  .refine(luhnValid, "is not a valid card number (Luhn check failed)");

/**
 * A string of 3–4 digits, or an integer of 3–4 digits (clients of the hosted vault send numbers). An integer
 * below 100 is refused rather than padded: 12 may have been "012" or "0012", and guessing would hand back a cvc
 * the cardholder never gave. Such a cvc has to be sent as a string.
 */
const cvc = z.union([z.string().regex(/^\d{3,4}$/), z.number().int().min(100).max(9999)], {
  error:
    'must be 3 or 4 digits, as a string or an integer of 100 to 9999 (send a leading 0 as a string: "012")',
});

const card = z.strictObject({
  number: cardNumber,
  expiration_month: z.number().int().min(1, "must be 1 to 12").max(12, "must be 1 to 12").optional(),
  expiration_year: z
    .number()
    .int()
    .min(1000, "must be four digits")
    .max(9999, "must be four digits")
    .optional(),
  cvc: cvc.optional(),
});

const routingNumber = z
  .string()
  .regex(/^\d{9}$/, "must be nine digits")
  .refine(abaValid, "is not a valid ABA routing number (checksum failed)");
const accountNumber = z.string().regex(/^\d{1,17}$/, "must be up to 17 digits");

const bank = z.strictObject({ routing_number: routingNumber, account_number: accountNumber });

const ssn = z
  .string()
  .regex(/^\d{3}-?\d{2}-?\d{4}$/, "must be nine digits, as 123-45-6789 or 123456789")
  .refine((v) => {
    const digits = v.replace(/-/g, "");
    const area = digits.slice(0, 3);
    return (
      area !== "000" &&
      area !== "666" &&
      !area.startsWith("9") &&
      digits.slice(3, 5) !== "00" &&
      !digits.endsWith("0000")
    );
  }, "is not a valid social security number");

const ein = z.string().regex(/^\d{2}-?\d{7}$/, "must be nine digits, as 12-3456789 or 123456789");

export interface TokenTypeSpec {
  container: string;
  mask?: unknown;
  fingerprint: string;
  /** Validates `data`; undefined accepts any JSON. */
  data?: z.ZodType;
  /** Whether the data holds a cvc that must become unreadable after an hour. */
  hasCvc?: boolean;
}

const LAST4 = "{{ data | reveal_last: 4 }}";

export const TOKEN_TYPES = {
  token: { container: "/general/high/", fingerprint: "{{ data | stringify }}" },
  card: {
    container: "/pci/high/",
    data: card,
    hasCvc: true,
    mask: {
      number: "{{ data.number | reveal_last: 4 }}",
      expiration_month: "{{ data.expiration_month }}",
      expiration_year: "{{ data.expiration_year }}",
    },
    fingerprint: "{{ data.number }}",
  },
  card_number: { container: "/pci/high/", data: cardNumber, mask: LAST4, fingerprint: "{{ data }}" },
  bank: {
    container: "/bank/high/",
    data: bank,
    mask: {
      routing_number: "{{ data.routing_number }}",
      account_number: "{{ data.account_number | reveal_last: 4 }}",
    },
    fingerprint: "{{ data.routing_number }}:{{ data.account_number }}",
  },
  us_bank_account_number: {
    container: "/bank/high/",
    data: accountNumber,
    mask: LAST4,
    fingerprint: "{{ data }}",
  },
  us_bank_routing_number: {
    container: "/bank/low/",
    data: routingNumber,
    mask: "{{ data }}",
    fingerprint: "{{ data }}",
  },
  social_security_number: {
    container: "/pii/high/",
    data: ssn,
    mask: LAST4,
    fingerprint: "{{ data | remove: '-' }}",
  },
  employer_id_number: {
    container: "/pii/high/",
    data: ein,
    mask: LAST4,
    fingerprint: "{{ data | remove: '-' }}",
  },
} satisfies Record<string, TokenTypeSpec>;

export type TokenType = keyof typeof TOKEN_TYPES;
export const TOKEN_TYPE_NAMES = Object.keys(TOKEN_TYPES) as [TokenType, ...TokenType[]];

export function typeSpec(type: TokenType): TokenTypeSpec {
  return TOKEN_TYPES[type];
}

/** Field errors of `data` for its type, keyed `data.<field>` (empty when valid). */
/** The data's errors for its type (none when it fits); zod's messages name keys, never values. */
export function dataErrors(type: TokenType, data: unknown): FieldErrorList {
  const errors = new FieldErrorList();
  const schema = typeSpec(type).data;
  if (!schema) {
    if (data === undefined) errors.add(["data"], "is required");
    return errors;
  }
  const parsed = schema.safeParse(data);
  return parsed.success ? errors : errors.addIssues(parsed.error.issues, "data");
}

/** Entity type for audit entries: card and bank keep their own, every other type logs as token. */
/** The audit entity types of tokens (auditEntityType). */
export const TOKEN_ENTITY_TYPES = ["card", "bank", "token"] as const;

export function auditEntityType(type: TokenType): "card" | "bank" | "token" {
  return type === "card" ? "card" : type === "bank" ? "bank" : "token";
}
