import { MAX_KEPT_ANSWER_CHARS } from "#shared/ports/stores.ts";
import { validationError } from "./errors.ts";

/**
 * The most a page of a list may come to as it travels: in AWS the answer is the function's result, whose body is
 * a JSON string (every `"` and `\` of it escaped once more), and Lambda caps a result at 6 MB; past it the
 * invocation fails (API Gateway's bare 500, no page, no cursor). 4 MiB leaves room for the envelope and headers.
 * 100 tokens of 64 KiB of quotes each came to 13 MB (availability review, 28 Nov 2026).
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** The most one answer's body may come to in a Lambda result (6 MB), leaving room for its headers. */
export const MAX_ANSWER_BYTES = 6 * 1024 * 1024 - 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** JSON text's bytes in the function's result: its UTF-8, plus one for each `"` or `\` escaped again there. */
export function resultBytesOfText(json: string): number {
  let escaped = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code === QUOTE || code === BACKSLASH) escaped++;
  }
  return Buffer.byteLength(json, "utf8") + escaped;
}

/**
 * Whether JSON text fits a Lambda result (MAX_ANSWER_BYTES as it travels there). At most 3 bytes per UTF-16 unit
 * (a `"` escaped again is 2, a CJK character 3): shorter text is not counted.
 */
export const answerFits = (json: string): boolean =>
  json.length <= MAX_ANSWER_BYTES / 3 || resultBytesOfText(json) <= MAX_ANSWER_BYTES;

/** An item's bytes in a page of the function's result (resultBytesOfText, and the comma between items). */
export const resultBytesOf = (item: unknown): number => resultBytesOfText(JSON.stringify(item) ?? "null") + 1;

/** How many of `items`, from the first, fit in a page (at least one: a single item is far below the budget). */
export function itemsThatFit(items: readonly unknown[], budget = MAX_PAGE_BYTES): number {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += resultBytesOf(items[i]);
    if (bytes > budget) return Math.max(1, i);
  }
  return items.length;
}

/**
 * For page-numbered lists (page and size fix where each page starts, so a page cannot be cut short without the
 * next one skipping what was cut): a 400 naming a size that fits, when this page's items do not.
 */
export function requirePageFits(items: readonly unknown[], size: number): void {
  const fit = itemsThatFit(items);
  if (fit < items.length)
    throw validationError(
      `This page's items come to more than an answer holds (${MAX_PAGE_BYTES / (1024 * 1024)} MiB); ask for fewer per page (size=${fit} fits this one), or page by cursor where the list offers it.`,
      { size: [`at most ${fit} of these items fit in one answer (asked for ${size})`] },
    );
}

/**
 * For a write that can still be refused (a batch before its commit): a 400 when its answer would not fit a Lambda
 * result, which jsonResult would otherwise refuse after the write (a 500 for stored tokens).
 */
export function requireAnswerFits(answer: unknown, detail: string): void {
  if (!answerFits(JSON.stringify(answer) ?? "null"))
    throw validationError(detail, { body: ["the answer would pass what a Lambda result carries (6 MB)"] });
}

/**
 * The most a kept answer's plaintext may come to (a queued reaction's outcome, read again for 24 h): its record
 * seals it as base64url (4 characters per 3 bytes) under a header of key id, iv and tag, in at most
 * MAX_KEPT_ANSWER_CHARS characters.
 */
export const MAX_KEPT_ANSWER_BYTES = Math.floor(((MAX_KEPT_ANSWER_CHARS - 512) * 3) / 4);

/**
 * For a write whose answer is kept rather than sent (a queued reaction's tokenize block, before its commit): a 400
 * when the answer, with `reserveBytes` for what the record keeps beside it, would not fit the record. Past the
 * commit, the kept outcome was a 500 "too large to keep" for stored tokens whose ids no one was told (stop 50's
 * review).
 */
export function requireKeptFits(answer: unknown, reserveBytes: number, detail: string): void {
  if (Buffer.byteLength(JSON.stringify(answer) ?? "null", "utf8") + reserveBytes > MAX_KEPT_ANSWER_BYTES)
    throw validationError(detail, {
      body: [`the answer would pass what a kept answer holds (${MAX_KEPT_ANSWER_BYTES} bytes)`],
    });
}
