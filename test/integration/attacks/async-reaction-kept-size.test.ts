/**
 * Review of stop 50 (a50), on the round-12 fix (7287c00): a reactor's tokenize block is checked before its commit against the whole
 * answer (tokens beside raw), but against what a synchronous answer carries (6 MB). A queued run (react-async,
 * or callback_url) keeps its outcome in one record of at most MAX_KEPT_ANSWER_CHARS (320,000 sealed characters):
 * an answer between that and 6 MB passes the check, its tokens are committed, and the outcome kept is a 500 "too
 * large to keep". The tokens stay stored, their ids never told to anyone, and the caller, told the run failed,
 * reacts again and stores them again.
 */
import { describe, expect, it } from "vitest";
import { bodyText } from "#test/support/http.ts";
import { reactedAsync, reactingTenant } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";

const svc = useService();

const tokensCreatedBy = async (applicationId: string) =>
  (await scanTable(svc)).filter(
    (i) => String(i.PK).startsWith("TOKEN#") && i.created_by === applicationId && i.entity !== "search_entry",
  );

describe("react-async: a tokenize block beside a raw too large to keep", () => {
  it("stores no token when the run's outcome could not be kept: the kept outcome is a 400 saying why", async () => {
    const { api, managementKey, acting, caller } = await reactingTenant(svc, ["token:use", "token:read"]);
    // 400 KB of raw (well under a synchronous answer's 6 MB) and one token.
    const code = `module.exports = async () => ({ raw: "r".repeat(400000), tokenize: { t: { type: "token", data: "orphan-marker" } } });`;
    const { result } = await reactedAsync(api, managementKey, { actingId: acting.id, caller, code });

    const stored = await tokensCreatedBy(acting.id);
    // Found: result 500 "The reactor's answer is too large to keep", one token stored (its id nowhere). Now the
    // block is refused before its commit, and the kept outcome says why.
    expect({ status: result.status, storedTokens: stored.length }).toEqual({ status: 400, storedTokens: 0 });
    expect(bodyText(result.body)).toMatch(/kept answer holds/);
  });

  it("a tokenize block whose answer a record keeps is stored and named in the outcome", async () => {
    const { api, managementKey, acting, caller } = await reactingTenant(svc, ["token:use", "token:read"]);
    const code = `module.exports = async () => ({ raw: "r".repeat(150000), tokenize: { t: { type: "token", data: "kept-marker" } } });`;
    const { result } = await reactedAsync(api, managementKey, { actingId: acting.id, caller, code });
    expect(result.status, bodyText(result.body).slice(0, 300)).toBe(200);
    const stored = await tokensCreatedBy(acting.id);
    expect(stored.length).toBe(1);
    expect(JSON.stringify(result.body)).toContain(String(stored[0]?.id));
  });

  it("a block of 250 cards shown with their data, as large as a block gets, is kept whole", async () => {
    const { api, managementKey, acting, caller } = await reactingTenant(svc, ["token:use", "token:read"]);
    // 250 distinct Luhn-valid numbers, each a card the caller is shown (reveal).
    const code = `module.exports = async () => {
      const luhn = (body) => { let sum = 0; for (let i = 0; i < body.length; i++) { let d = Number(body[body.length - 1 - i]); if (i % 2 === 0) { d *= 2; if (d > 9) d -= 9; } sum += d; } return body + ((10 - (sum % 10)) % 10); };
      const tokenize = {};
      for (let i = 0; i < 250; i++) tokenize["c" + i] = { type: "card", data: { number: luhn("400000" + String(i).padStart(9, "0")), expiration_month: 12, expiration_year: 2030 } };
      return { tokenize };
    };`;
    const { result } = await reactedAsync(api, managementKey, { actingId: acting.id, caller, code });
    expect(result.status, bodyText(result.body).slice(0, 300)).toBe(200);
    const shown = Object.values(
      (result.body as { tokens: Record<string, { data?: { number?: string } }> }).tokens,
    );
    expect(shown).toHaveLength(250);
    expect(shown.every((t) => typeof t.data?.number === "string" && t.data.number.length === 16)).toBe(true);
    expect(await tokensCreatedBy(acting.id)).toHaveLength(250);
  });
});
