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
});
