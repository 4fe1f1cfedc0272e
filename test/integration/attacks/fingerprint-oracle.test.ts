import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Attack: every answer carried the token's `fingerprint`, masked or redacted ones too. A public key sees a
 * victim's SSN masked to its last 4 digits (and its fingerprint) in a PATCH answer, then creates candidate
 * tokens with those last 4 digits: each create answer shows the candidate's fingerprint, and the one that
 * equals the victim's is the SSN (at most 100,000 guesses, ~5 digits of entropy).
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const SSN = "123-45-6789";

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const pub = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create", "token:update"],
  });
  const revealer = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const victim = await api.post<TokenBody>("/tokens", {
    key: owner,
    body: { type: "social_security_number", data: SSN },
  });
  expect(victim.status).toBe(201);
  return { api, ...tenant, owner, pub, revealer, id: victim.body.id };
}

describe("attack: fingerprints as an oracle for masked values", () => {
  it("shows a public key no fingerprint to compare candidates against", async () => {
    const { api, pub, id } = await setup();

    const seen = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: pub,
      headers: mergePatch,
      body: { metadata: { touched: "yes" } },
    });
    // The mask gives the last 4; the attacker enumerates the first 5 digits (a few here, the real one among them).
    const candidates = ["123-45-6788", "234-56-6789", "123-45-6789", "345-67-6789"].filter((c) =>
      c.endsWith(String(seen.body.data).slice(-4)),
    );
    const guesses = await Promise.all(
      candidates.map((data) =>
        api.post<TokenBody>("/tokens", { key: pub, body: { type: "social_security_number", data } }),
      ),
    );
    const hit = guesses.find(
      (g) => g.body.fingerprint !== undefined && g.body.fingerprint === seen.body.fingerprint,
    );

    expect(seen.status).toBe(200);
    expect(seen.body.data).toBe("XXXXXXX6789");
    expect(guesses.every((g) => g.status === 201)).toBe(true);
    expect(seen.body).not.toHaveProperty("fingerprint");
    for (const g of guesses) expect(g.body).not.toHaveProperty("fingerprint");
    expect(hit).toBeUndefined();
  });

  it("leaves the fingerprint out of masked and redacted reads and lists, keeps it for reveal", async () => {
    const { api, managementKey, owner, revealer, id } = await setup();
    const redactor = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/", transform: "redact", permissions: ["token:read"] }],
    });

    const masked = await api.get<TokenBody>(`/tokens/${id}`, { key: owner });
    const redacted = await api.get<TokenBody>(`/tokens/${id}`, { key: redactor });
    const listed = await api.get<{ data: TokenBody[] }>(`/tokens?id=${id}`, { key: owner });
    const revealed = await api.get<TokenBody>(`/tokens/${id}`, { key: revealer });
    const revealedList = await api.get<{ data: TokenBody[] }>(`/tokens?id=${id}`, { key: revealer });

    expect(masked.status).toBe(200);
    expect(masked.body).not.toHaveProperty("fingerprint");
    expect(redacted.status).toBe(200);
    expect(redacted.body).not.toHaveProperty("fingerprint");
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).not.toHaveProperty("fingerprint");
    expect(revealed.body.data).toBe(SSN);
    expect(revealed.body.fingerprint).toEqual(expect.any(String));
    expect(revealedList.body.data[0]?.fingerprint).toBe(revealed.body.fingerprint);
  });

  it("never hints, by a next page, that tokens a key only masks share a fingerprint", async () => {
    const { api, owner, revealer, id } = await setup();
    for (let i = 0; i < 2; i++) {
      const copy = { type: "social_security_number", data: SSN, deduplicate_token: false };
      expect((await api.post("/tokens", { key: owner, body: copy })).status).toBe(201);
    }
    const fingerprint = (await api.get<TokenBody>(`/tokens/${id}`, { key: revealer })).body.fingerprint;
    const query = (size: number) =>
      `/v2/tokens?fingerprint=${encodeURIComponent(String(fingerprint))}&size=${size}`;

    // The owner's key masks SSNs: the filter finds nothing for it, and says nothing about how many matched.
    const masked = await api.get(query(1), { key: owner });
    expect(masked.status).toBe(200);
    expect(masked.body).toEqual({ pagination: { page_size: 1 }, data: [] });
    const all = await api.get<{ data: TokenBody[] }>(query(10), { key: revealer });
    expect(all.body.data).toHaveLength(3);
  });

  it("never hints at masked matches by a next page, however many share the guessed value", async () => {
    const { api, managementKey, owner } = await setup();
    // The attacker reveals (and creates) only in /mine/, and reads everything else masked.
    const mine = {
      priority: 1,
      container: "/mine/",
      transform: "reveal",
      permissions: ["token:create", "token:read"],
    };
    const rest = { priority: 2, container: "/", transform: "mask", permissions: ["token:read"] };
    const agent = await appKey(api, managementKey, { type: "private", rules: [mine, rest] });
    // The same SSN tokenized once per order, more times than the pages one request reads (10).
    const copies = Array.from({ length: 11 }, () => ({
      type: "social_security_number",
      data: "123-45-6789",
    }));
    expect((await api.post("/tokenize", { key: owner, body: copies })).status).toBe(201);
    const probe = async (guess: string) => {
      const made = await api.post<TokenBody>("/tokens", {
        key: agent,
        body: { type: "social_security_number", data: guess, containers: ["/mine/"] },
      });
      const fingerprint = encodeURIComponent(String(made.body.fingerprint));
      const page = await api.get(`/v2/tokens?size=1&container=/pii/&fingerprint=${fingerprint}`, {
        key: agent,
      });
      const everywhere = await api.get<{ data: TokenBody[] }>(`/v2/tokens?fingerprint=${fingerprint}`, {
        key: agent,
      });
      return { page: page.body, found: everywhere.body.data.map((t) => t.id), id: made.body.id };
    };
    const right = await probe("123-45-6789");
    const wrong = await probe("123-45-0000");
    // Before: the right guess answered a `next` (its masked matches used up the pages), the wrong one none.
    expect(right.page).toEqual({ pagination: { page_size: 1 }, data: [] });
    expect(wrong.page).toEqual({ pagination: { page_size: 1 }, data: [] });
    // Where it reveals, the filter still finds the value: its own token, and only that.
    expect(right.found).toEqual([right.id]);
  });

  it("still deduplicates server-side without showing fingerprints", async () => {
    const { api, owner, pub, id } = await setup();

    const again = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "social_security_number", data: "123456789", deduplicate_token: true },
    });
    const refused = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "social_security_number", data: SSN, deduplicate_token: true },
    });

    expect(again.status).toBe(201);
    expect(again.body.id).toBe(id);
    expect(again.body).not.toHaveProperty("fingerprint");
    // A key that may not read the SSN gets a token of its own: neither the id nor a 409 tells it the value exists.
    expect(refused.status).toBe(201);
    expect(refused.body.id).not.toBe(id);
  });
});
