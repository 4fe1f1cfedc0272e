/**
 * Amplification review (28 Nov 2026): answers, or work, far beyond what the request put in. A Lambda result holds
 * 6 MB (6,291,456 bytes), and locally every tenant shares one process. Each attack needs no more than a public key
 * (token:create, copied from a checkout page) or a back end's key reading masked.
 */
import { describe, expect, it } from "vitest";
import { charactersStringified } from "#test/support/counting.ts";
import { useService } from "#test/support/service.ts";
import { merchantKeys } from "#test/support/tokens.ts";

const svc = useService();
const stringify = JSON.stringify;
/** A tenant's public key and its back end's key without rules (it reads masked). */
const merchant = () => merchantKeys(svc.url, svc.rootKey, "Amplification");

/** The size of the function's result that would carry this answer (its body a JSON string in the envelope). */
const resultBytes = (status: number, text: string) =>
  Buffer.byteLength(stringify({ statusCode: status, body: text }));

const data = "x".repeat(60_000); // within MAX_DATA_BYTES (64 KiB)

describe("attack: answers multiplied beyond what the request put in", () => {
  it("refuses a mask whose `{{data}}` strings multiply the data (a 92 KB create answered 174 MB)", async () => {
    const { api, publicKey } = await merchant();
    // `"{{data}}",` is 11 bytes: 2,900 of them are within MAX_MASK_BYTES (32 KiB), each the whole data again.
    const many = Array.from({ length: 2_900 }, () => "{{data}}");

    const refused = await fetch(`${svc.url}/tokens`, {
      method: "POST",
      headers: { "svc-api-key": publicKey, "content-type": "application/json" },
      body: stringify({ type: "token", data, mask: many }),
    });
    const text = await refused.text();
    const twice = await api.post("/tokens", {
      key: publicKey,
      body: { type: "token", data, mask: ["{{data}}", "{{data}}"] },
    });

    expect(refused.status).toBe(400);
    expect(text).toContain("exceeded 131072 characters");
    expect(resultBytes(refused.status, text)).toBeLessThan(64 * 1024);
    // Twice the data (120 KB) is within what a mask may make of it.
    expect(twice.status).toBe(201);
  }, 120_000);

  it("detokenizes a masked value serialised once, however often it occurs, and stops at the first value past 1 MiB", async () => {
    const { api, publicKey, backEnd } = await merchant();
    const created = await api.post<{ id: string }>("/tokens", {
      key: publicKey,
      body: { type: "token", data, mask: ["{{data}}", "{{data}}"] },
    });
    expect(created.status).toBe(201);
    const listed = await api.get<{ data: { id: string }[] }>("/tokens?size=1", { key: backEnd });
    const id = listed.body.data[0]?.id as string;
    // 1,000 expressions (MAX_EXPRESSIONS) of one 120 KB masked value: 120 MB, refused past 1 MiB.
    const body = stringify(Array.from({ length: 1_000 }, () => `{{ ${id} }}`));
    const { result: res, chars } = await charactersStringified(async () => {
      const answer = await fetch(`${svc.url}/detokenize`, {
        method: "POST",
        headers: { "svc-api-key": backEnd, "content-type": "application/json" },
        body,
      });
      await answer.text();
      return answer;
    });

    expect(res.status).toBe(400);
    // Before: every occurrence was written out before its charge (120 MB here; 6 GB with a larger mask).
    expect(chars).toBeLessThan(4 * 1024 * 1024);
  }, 120_000);

  it("names at most 100 fields in a 400's `errors` (110,000 bad metadata entries answered 7.4 MB)", async () => {
    const { publicKey } = await merchant();
    const keys = Array.from({ length: 110_000 }, (_, i) => i.toString(36));
    const body = `{"type":"token","data":1,"metadata":{${keys.map((k) => `"${k}":1`).join(",")}}}`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);

    const res = await fetch(`${svc.url}/tokens`, {
      method: "POST",
      headers: { "svc-api-key": publicKey, "content-type": "application/json" },
      body,
    });
    const text = await res.text();
    const answer = JSON.parse(text) as { detail: string; errors: Record<string, string[]> };

    expect(res.status).toBe(400);
    expect(Object.keys(answer.errors)).toHaveLength(100);
    expect(answer.detail).toContain("the first 100 of 110000 fields in error are listed");
    expect(resultBytes(res.status, text)).toBeLessThan(64 * 1024);
  }, 120_000);

  it("cuts a field's message short: a card's unknown key of 60,000 characters is not echoed whole", async () => {
    const { publicKey } = await merchant();
    const unknown = "u".repeat(60_000); // the data within MAX_DATA_BYTES
    const res = await fetch(`${svc.url}/tokens`, {
      method: "POST",
      headers: { "svc-api-key": publicKey, "content-type": "application/json" },
      body: stringify({
        type: "card",
        data: { number: "4242424242424242", expiration_month: 12, expiration_year: 2099, [unknown]: 1 },
      }),
    });
    const text = await res.text();
    const answer = JSON.parse(text) as { errors: Record<string, string[]> };

    expect(res.status).toBe(400);
    // zod's "Unrecognized key" message names the key: kept, cut to its first characters.
    expect(Object.values(answer.errors).flat().join("\n")).toMatch(/Unrecognized key.*uuuu/);
    expect(resultBytes(res.status, text)).toBeLessThan(4 * 1024);
  }, 120_000);

  it("gathers a batch's bad fields with short names and no more than it lists (one long key under 250 bad requests: 100 MB)", async () => {
    const { publicKey } = await merchant();
    const tokenize = (body: string) =>
      fetch(`${svc.url}/tokenize`, {
        method: "POST",
        headers: { "svc-api-key": publicKey, "content-type": "application/json" },
        body,
      }).then(async (res) => ({ status: res.status, text: await res.text() }));
    // 250 bad requests under one key of a million characters (a 1 MiB body): 250 field names of 1 MB.
    const long = stringify({
      ["k".repeat(1_000_000)]: Array.from({ length: 250 }, () => ({ type: "token", data: 1, metadata: 1 })),
    });
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(1024 * 1024);
    const { result, chars } = await charactersStringified(() => tokenize(long));
    // Before: a 100 MB problem written out on the shared process, answered 500 answer-too-large.
    expect(result.status).toBe(400);
    expect(chars).toBeLessThan(1024 * 1024);

    // 1,000 bad metadata entries under a key of 100,000 characters (117 KB): names past 16,383 characters share
    // V8's hash (their length), so each was compared in full with every one before it (24 s of the shared process).
    const metadata = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, i) => [String(i).padStart(4, "0"), 1]),
    );
    const many = await tokenize(stringify({ ["k".repeat(100_000)]: { type: "token", data: 1, metadata } }));
    const problem = JSON.parse(many.text) as { detail: string; errors: Record<string, string[]> };
    expect(many.status).toBe(400);
    expect(problem.detail).toContain("the first 100 of 1000 fields in error are listed");
    const names = Object.keys(problem.errors);
    expect(names).toHaveLength(100);
    // Each key cut to 64 characters and marked: `kkkk…k….metadata.0000`.
    expect(Math.max(...names.map((name) => name.length))).toBeLessThan(100);
    expect(names[0]).toBe(`${"k".repeat(64)}….metadata.0000`);
  }, 180_000);
});
