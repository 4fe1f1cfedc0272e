import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { luhnValid } from "#shared/domain/tokens/checksums.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useOnlyProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

/**
 * Round 4 review of dedabb6: a use-only caller (a require_auth:false proxy's key, no token:read) reads digits of a
 * card beyond what the rules admit, through destinations that echo nothing and only validate.
 */
const svc = useService({ allowPrivateDestinations: true });

const randomDigits = (n: number) =>
  Array.from({ length: n }, () => String(Math.floor(Math.random() * 10))).join("");
function luhnComplete(body: string): string {
  for (let c = 0; c <= 9; c++) if (luhnValid(body + c)) return body + c;
  throw new Error("unreachable");
}

let seen: string[] = [];

/** A JS back end (or PHP's (int)): exp_month read with parseInt, then 1..12. */
const monthValid = (v: unknown) => {
  const m = Number.parseInt(String(v ?? ""), 10);
  return m >= 1 && m <= 12;
};
/** A PSP that strips every non-digit from the number (a `\D` strip), then 13-19 digits and Luhn. */
const panValid = (v: unknown) => {
  const n = String(v ?? "").replace(/\D/g, "");
  return /^[0-9]{13,19}$/.test(n) && luhnValid(n);
};

const destination = useLocalServer((req, res, received) => {
  const raw = received.toString("utf8");
  seen.push(raw);
  if (req.url?.startsWith("/any")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
    return;
  }
  const body = JSON.parse(raw) as Record<string, unknown>;
  const ok = req.url?.startsWith("/month") ? monthValid(body.exp_month) : panValid(body.number);
  res.writeHead(ok ? 200 : 402, { "content-type": "application/json" });
  res.end("{}");
});

const setup = (path: string) => useOnlyProxy(svc.url, svc.rootKey, `${destination.url}${path}`);

describe("round 4: hmac with a key of the caller's is a fresh bit of the card per request", () => {
  it("reads the 4 middle digits of a 16-digit card (BIN 8 and last four known, as card_mask shows) in ~12 requests", async () => {
    const { token, json } = await setup("/month");
    const secret = luhnComplete(`4${randomDigits(14)}`);
    const pan = await token("card_number", secret);
    seen = [];
    // What the caller knows: card_mask: true shows the first 8 and the last 4 (as the tenant's mask may).
    const bin = secret.slice(0, 8);
    const last4 = secret.slice(12);
    let candidates: string[] = [];
    for (let m = 0; m < 10_000; m++) {
      const c = `${bin}${String(m).padStart(4, "0")}${last4}`;
      if (luhnValid(c)) candidates.push(c);
    }
    expect(candidates.length).toBe(1000);
    let requests = 0;
    while (candidates.length > 1 && requests < 60) {
      const key = `k${requests}-${Math.random()}`;
      // exp_month = "1" + hex: parseInt reads 1, 10, 11, 12 (valid) or 13.. (invalid): ~0.45 of keys' outputs pass.
      const res = await json({ exp_month: `1{{ token: ${pan} | hmac: '${key}', 'sha1' }}`, amount: 100 });
      requests++;
      // Unpatched (dedabb6): 200 or 402, and the loop ends with candidates == [secret] in ~12 requests
      // (detokenize-r4-repro.test.ts). Now refused before any data is opened.
      expect(res.status).toBe(403);
      expect(seen).toEqual([]);
      if (res.status === 403) break;
      const passed = res.status === 200;
      candidates = candidates.filter(
        (c) => monthValid(`1${createHmac("sha1", key).update(c).digest("hex")}`) === passed,
      );
    }
    expect(candidates.length).toBe(1000); // nothing learned
    // The destination never echoed anything; the caller never read the token.
    expect(seen.every((s) => !s.includes(secret))).toBe(true);
  }, 60_000);
});

describe("round 4: to_base64 sends every third digit apart (a digit of base64 iff that digit >= 4)", () => {
  it("a \\D-stripping Luhn PSP reads the 9th and 12th digits (hidden by every mask)", async () => {
    const { token, json } = await setup("/pan");
    // For "0".."9" (0x30..0x39) each 3-byte group b1 b2 b3 encodes as 'M|N|O', 'D|T|j|z', A..k, then 48 + (b3 & 15):
    // 'w'..'z' for 0..3 and '0'..'5' for 4..9. A \D strip keeps d3, d6, d9, d12, d15 (minus 4) where >= 4.
    const pick = () => String(4 + Math.floor(Math.random() * 6));
    const secret = luhnComplete(`4${randomDigits(7)}${pick()}${randomDigits(2)}${pick()}${randomDigits(2)}`);
    const pan = await token("card_number", secret);
    seen = [];
    const bin = secret.slice(0, 8);
    const last4 = secret.slice(12);
    const emitted = (card: string) => Buffer.from(card).toString("base64").replace(/\D/g, "");
    const withMiddle = (d9: number, d12: number) => `${bin}${d9}00${d12}${last4}`;
    expect(emitted(withMiddle(Number(secret[8]), Number(secret[11])))).toBe(emitted(secret));

    let hypotheses = Array.from({ length: 100 }, (_, i) => [Math.floor(i / 10), i % 10] as const);
    let requests = 0;
    for (;;) {
      let best: { prefix: string; suffix: string; passing: typeof hypotheses } | undefined;
      // The caller's digits before (a check digit) and after (a shift of the parity of what base64 lets through).
      for (const suffix of ["", "0"])
        for (let length = 8; length <= 18; length++)
          for (let c = 0; c <= 9; c++) {
            const prefix = `${"0".repeat(length - 1)}${c}`;
            const passing = hypotheses.filter(([a, b]) =>
              panValid(prefix + emitted(withMiddle(a, b)) + suffix),
            );
            const split = Math.min(passing.length, hypotheses.length - passing.length);
            if (
              split > 0 &&
              (!best || split > Math.min(best.passing.length, hypotheses.length - best.passing.length))
            )
              best = { prefix, suffix, passing };
          }
      if (!best) break;
      const res = await json({
        number: `${best.prefix}{{ token: ${pan} | to_base64 }}${best.suffix}`,
        amount: 100,
      });
      requests++;
      // Unpatched: 200 or 402, ending with [[d9, d12]] (detokenize-r4-repro.test.ts). Now refused.
      expect(res.status).toBe(403);
      expect(seen).toEqual([]);
      if (res.status === 403) break;
      const passing = new Set(best?.passing);
      hypotheses = hypotheses.filter((h) => passing.has(h) === (res.status === 200));
    }
    // Digits 9 and 12 (each >= 4 here; below 4 the caller learns "< 4"), which neither BIN nor last four shows.
    expect(hypotheses.length).toBe(100); // nothing learned
    expect(requests).toBe(1);
  }, 60_000);
});
