import { describe, expect, it } from "vitest";
import { luhnValid } from "#shared/domain/tokens/checksums.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useOnlyProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

/**
 * Round 3 review of 3351ce1 (formatsOnly): a use-only caller (a require_auth:false proxy's key) reads a card number
 * back through a realistic payment-processor-like destination that echoes nothing and only answers 200 (valid card
 * number: digits, 13-19 long, Luhn) or 402. The mask character is a blacklist of what "a destination may read as
 * part of a number, or drop from one"; what a destination drops depends on its format and language.
 */
const svc = useService({ allowPrivateDestinations: true });

const validCard = (n: string) => /^[0-9]{13,19}$/.test(n) && luhnValid(n);

// A random Luhn-valid 16-digit card.
function randomCard(): string {
  let body = "4";
  for (let i = 0; i < 14; i++) body += String(Math.floor(Math.random() * 10));
  for (let c = 0; c <= 9; c++) if (luhnValid(body + c)) return body + c;
  throw new Error("unreachable");
}

let seen: string[] = [];

const destination = useLocalServer((req, res, body) => {
  const raw = body.toString("utf8");
  seen.push(raw);
  let number = "";
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/x-www-form-urlencoded")) {
    // As any form API (Stripe's is form-encoded): fields split at '&'.
    number = new URLSearchParams(raw).get("number") ?? "";
  } else {
    // A Python/Java back end: "".join(number.split()) / StringUtils.deleteWhitespace. Their whitespace holds
    // U+001C..U+001F (Python and Java) and U+0085 (Python), which are neither \s, \p{Z} nor \p{Pd} in JS.
    const parsed = JSON.parse(raw) as { number?: string };
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters Python and Java read as whitespace
    number = (parsed.number ?? "").replace(/[\s\u001c-\u001f\u0085]/g, "");
  }
  // Echoes nothing: a status only.
  res.writeHead(validCard(number) ? 200 : 402, { "content-type": "application/json" });
  res.end("{}");
});

const setup = () => useOnlyProxy(svc.url, svc.rootKey, destination.url);

const double = (d: number) => (d * 2 > 9 ? d * 2 - 9 : d * 2);

/**
 * Reads a 16-digit card: for k = 1..15, the first k digits (reveal: k, 0, MASK) after the caller's digit c and
 * leading zeros; the destination takes Luhn of "0…0 c d1…dk" (the mask dropped or ending the field): exactly one c
 * passes, which gives d_k from d_1..d_(k-1). The 16th is the check digit.
 */
async function readCard(
  probe: (k: number, c: number) => Promise<number>,
): Promise<{ card: string; requests: number }> {
  const digits: number[] = [];
  let requests = 0;
  for (let k = 1; k <= 15; k++) {
    let found = -1;
    for (let c = 0; c <= 9; c++) {
      requests++;
      if ((await probe(k, c)) === 200) {
        found = c;
        break;
      }
    }
    expect(found, `digit ${k}`).toBeGreaterThanOrEqual(0);
    // Position of c from the right is k (0-based): doubled when k is odd. Sum over known digits + d_k ≡ 0.
    const wc = k % 2 === 1 ? double(found) : found;
    let known = 0;
    for (let i = 0; i < k - 1; i++) {
      const pos = k - 1 - i; // position of d_(i+1) from the right
      known += pos % 2 === 1 ? double(digits[i] as number) : (digits[i] as number);
    }
    digits.push(((-(wc + known) % 10) + 10) % 10);
  }
  const body = digits.join("");
  for (let c = 0; c <= 9; c++) if (luhnValid(body + c)) return { card: body + c, requests };
  throw new Error("unreachable");
}

const zeros = (k: number) => "0".repeat(Math.max(0, 14 - k));

describe("round 3: a use-only caller reads a card through a Luhn-checking destination", () => {
  it("reads a card back through a form PSP ('&' mask) and a Python/Java-whitespace PSP (U+001C mask) unless refused", async () => {
    const { token, form, json } = await setup();
    const secret = randomCard();
    const pan = await token("card_number", secret);
    seen = [];

    const viaForm = (k: number, c: number) =>
      form(`number=${zeros(k)}${c}{{ token: ${pan} | reveal: ${k}, 0, '&' }}&currency=usd`).then(
        (r) => r.status,
      );
    const viaJson = (k: number, c: number) =>
      json({ number: `${zeros(k)}${c}{{ token: ${pan} | reveal: ${k}, 0, '\u001c' }}` }).then(
        (r) => r.status,
      );

    // Unpatched, readCard(viaForm) and readCard(viaJson) return `secret` in ~80 requests each
    // (before 28 Nov 2026, round 3). Now every probe is refused before anything is read.
    for (const probe of [viaForm, viaJson]) for (const k of [1, 7, 15]) expect(await probe(k, 0)).toBe(403);
    const lastDigits = await form(`number={{ token: ${pan} | reveal_last: 3, '&' }}`);
    expect(lastDigits.status).toBe(403);
    expect(seen).toEqual([]);
    expect(/[\p{N}\p{Z}\p{Pd}\s]/u.test("\u001c")).toBe(false); // why the mask blacklist let it through

    // Fixed places still go: the last four, card_mask's BIN and last four, any mask character.
    const fixed = await json({
      a: `{{ token: ${pan} | reveal: 0, 4, '*' }}`,
      b: `{{ token: ${pan} | reveal_last: 4 }}`,
      c: `{{ token: ${pan} | card_mask: true, true, '*' }}`,
    });
    expect(fixed.status).not.toBe(403);
    expect(seen.length).toBe(1);
    void readCard;
  });
});

describe("round 3: value-dependent outcomes of allowed single filters", () => {
  it("json on a text token (parsed as JSON, failing exactly when a digit string starts with 0): refused", async () => {
    const { token, json } = await setup();
    const leadingZero = await token("token", "0123456789");
    const other = await token("token", "1123456789");
    const card = await token("card", {
      number: "4242424242424242",
      expiration_month: 3,
      expiration_year: 2030,
    });

    const a = await json({ v: `{{ token: ${leadingZero} | json: '$' }}` });
    const b = await json({ v: `{{ token: ${other} | json: '$' }}` });
    const fields = await json({ v: `{{ token: ${card} | json: '$.expiration_year' }}` });

    // It was: a 400 (invalid-expression, nothing sent), b forwarded. Now both refused before any data is opened.
    expect([a.status, b.status]).toEqual([403, 403]);
    expect(fields.status).not.toBe(403); // a card's fields, picked by name
  });

  it("card_exp: 'M…M' was one or two characters per M (the size limit told month >= 10): refused", async () => {
    const { token, json } = await setup();
    const oct = await token("card", {
      number: "4242424242424242",
      expiration_month: 10,
      expiration_year: 2030,
    });
    const mar = await token("card", {
      number: "4242424242424242",
      expiration_month: 3,
      expiration_year: 2030,
    });
    const probe = (id: string) =>
      Array.from({ length: 200 }, () => `{{ token: ${id} | card_exp: '${"Ma".repeat(2000)}' }}`).join("");

    const a = await json({ v: probe(oct) });
    const b = await json({ v: probe(mar) });

    // Unpatched: a is 400 detokenized-too-large (200 x 6000 bytes > 1 MiB), b forwarded (200 x 4000 bytes).
    // A bare M (one or two characters) is now refused to a use-only caller; MM and YY/YYYY are fixed width.
    expect(a.status).toBe(403);
    expect(b.status).toBe(403);
  });
});
