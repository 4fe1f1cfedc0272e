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
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, revealEverything } from "#test/support/tokens.ts";

const svc = useService();
/** Lambda's synchronous result limit (API Gateway's Lambda integration). */
const LAMBDA_RESULT_BYTES = 6 * 1024 * 1024;

/** The size of the function's result that would carry this answer (its body a JSON string in the envelope). */
const resultBytes = (status: number, headers: Headers, text: string) =>
  Buffer.byteLength(
    JSON.stringify({ statusCode: status, headers: Object.fromEntries(headers.entries()), body: text }),
  );

describe("attack: a public key plants tokens no page of the back end's list can carry", () => {
  it("cuts a cursor page short with a `next` to the rest, and refuses a numbered page naming a size that fits", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Big pages");
    const publicKey = await appKey(api, tenant.managementKey, {
      type: "public",
      permissions: ["token:create"],
    });
    const backEnd = await appKey(api, tenant.managementKey, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
      rules: revealEverything,
    });
    // 32,000 quotes: 64,002 bytes of JSON each, within MAX_DATA_BYTES; 128 KB once escaped again in the result.
    const data = '"'.repeat(32_000);
    const planted = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const created = await api.post<{ id: string }>("/tokens", {
        key: publicKey,
        body: { type: "token", data },
      });
      expect(created.status).toBe(201);
      planted.add(created.body.id);
    }

    // GET /v2/tokens: every page carried, every token listed once, the whole data of each.
    const listed: string[] = [];
    let start: string | undefined;
    let pages = 0;
    do {
      const query = `size=100${start ? `&start=${encodeURIComponent(start)}` : ""}`;
      const res = await fetch(`${svc.url}/v2/tokens?${query}`, { headers: { "svc-api-key": backEnd } });
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(resultBytes(res.status, res.headers, text)).toBeLessThanOrEqual(LAMBDA_RESULT_BYTES);
      const page = JSON.parse(text);
      for (const token of page.data) {
        expect(token.data).toBe(data);
        listed.push(token.id);
      }
      start = page.pagination.next;
      pages++;
    } while (start && pages < 10);
    expect(pages).toBeGreaterThan(1);
    expect(listed).toHaveLength(60);
    expect(new Set(listed)).toEqual(planted);

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
});
