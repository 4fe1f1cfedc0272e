/**
 * Availability review (28 Nov 2026): how large one page of a token list may be. Token data is at most 64 KiB of
 * JSON each, and a page holds up to 100 tokens: 6.4 MB of data alone, and in the function's result (API Gateway's
 * Lambda integration) the body travels as a JSON string, so every `"` and `\` of it is escaped once more. A
 * Lambda result holds at most 6 MB (6,291,456 bytes): past it the invocation fails (API Gateway's bare 500, no
 * problem+json, no cursor to page on). Anyone holding the tenant's public key (a checkout page's, token:create)
 * could plant such tokens (60 made a 7.7 MB result), and the tenant's back end then could not list them in AWS.
 * Locally the gateway passes any size, so the test measures the result the function would return.
 */
import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { merchantKeys, revealEverything } from "#test/support/tokens.ts";

const svc = useService();
/** Lambda's synchronous result limit (API Gateway's Lambda integration). */
const LAMBDA_RESULT_BYTES = 6 * 1024 * 1024;

/** The size of the function's result that would carry this answer (its body a JSON string in the envelope). */
const resultBytes = (status: number, headers: Headers, text: string) =>
  Buffer.byteLength(
    JSON.stringify({ statusCode: status, headers: Object.fromEntries(headers.entries()), body: text }),
  );

describe("attack: a public key plants tokens no page of the back end's list can carry", () => {
  it("cuts a cursor page (listing, search) short with a `next` to the rest, and refuses a numbered page naming a size that fits", async () => {
    const { api, publicKey, backEnd } = await merchantKeys(
      svc.url,
      svc.rootKey,
      "Big pages",
      revealEverything,
    );
    // 31,950 quotes: about 64,000 bytes of JSON each, within MAX_DATA_BYTES; 128 KB once escaped again in the
    // result. A search index the back end looks the tokens up by (a `data:` search pages on its own positions).
    const value = "4000056655665556";
    const data = { v: value, pad: '"'.repeat(31_950) };
    const planted = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const created = await api.post<{ id: string }>("/tokens", {
        key: publicKey,
        body: { type: "token", data, search_indexes: ["{{ data.v }}"] },
      });
      expect(created.status).toBe(201);
      planted.add(created.body.id);
    }

    // GET /v2/tokens and a `data:` search: every page carried, every token answered once, the whole data of each.
    const pageThrough = async (request: (start: string | undefined) => Promise<Response>) => {
      const listed: string[] = [];
      let start: string | undefined;
      let pages = 0;
      do {
        const res = await request(start);
        const text = await res.text();
        expect(res.status).toBe(200);
        expect(resultBytes(res.status, res.headers, text)).toBeLessThanOrEqual(LAMBDA_RESULT_BYTES);
        const page = JSON.parse(text);
        for (const token of page.data) {
          expect(token.data).toEqual(data);
          listed.push(token.id);
        }
        start = page.pagination.next;
        pages++;
      } while (start && pages < 10);
      expect(pages).toBeGreaterThan(1);
      expect(listed).toHaveLength(60);
      expect(new Set(listed)).toEqual(planted);
    };
    await pageThrough((start) =>
      fetch(`${svc.url}/v2/tokens?size=100${start ? `&start=${encodeURIComponent(start)}` : ""}`, {
        headers: { "svc-api-key": backEnd },
      }),
    );
    // Before (review round 8): the search answered all 60, a 500 answer-too-large with no cursor to page on.
    await pageThrough((start) =>
      fetch(`${svc.url}/v2/tokens/search`, {
        method: "POST",
        headers: { "svc-api-key": backEnd, "content-type": "application/json" },
        body: JSON.stringify({ query: `data:${value}`, size: 100, ...(start ? { start } : {}) }),
      }),
    );

    // GET /tokens?page&size: a page cannot be cut short without the next page skipping what was cut.
    const refused = await api.get<{ detail: string }>("/tokens?size=100", { key: backEnd });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    const fits = Number(/size=(\d+) fits/.exec(refused.body.detail)?.[1]);
    expect(fits).toBeGreaterThan(0);
    expect(fits).toBeLessThan(60);
    const page = await fetch(`${svc.url}/tokens?size=${fits}`, { headers: { "svc-api-key": backEnd } });
    const text = await page.text();
    expect(page.status).toBe(200);
    expect(resultBytes(page.status, page.headers, text)).toBeLessThanOrEqual(LAMBDA_RESULT_BYTES);
    expect(JSON.parse(text).data).toHaveLength(fits);
  }, 120_000);

  it("refuses a tokenize batch whose answer no result carries before storing anything (it was a 500 for 20 stored tokens)", async () => {
    const { api, publicKey, backEnd } = await merchantKeys(svc.url, svc.rootKey, "Batch answer size");
    // 1,000 quotes rendered 120 times: 120,000 characters each (within the 128 Ki mask output), 4 bytes apiece as
    // a Lambda result carries them; 20 such requests (66 KB) answer 9.6 MB.
    const request = {
      type: "token",
      data: '"'.repeat(1_000),
      mask: Array.from({ length: 120 }, () => "{{data}}"),
    };
    const batch = await api.post<{ detail: string }>("/tokenize", {
      key: publicKey,
      body: Array.from({ length: 20 }, () => request),
    });
    const held = await api.get<{ pagination: { total_items: number } }>("/tokens?size=1", { key: backEnd });
    // Before: 500 answer-too-large with all 20 stored (and logged created); the caller never learnt their ids.
    expect({ status: batch.status, stored: held.body.pagination.total_items }).toEqual({
      status: 400,
      stored: 0,
    });
    expect(batch.body.detail).toContain("send fewer token requests per call");
    // Half of it is answered in full.
    const half = await api.post<unknown[]>("/tokenize", {
      key: publicKey,
      body: Array.from({ length: 10 }, () => ({ ...request, mask: request.mask.slice(0, 60) })),
    });
    expect(half.status).toBe(201);
    expect(half.body).toHaveLength(10);
  }, 120_000);
});
