import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import {
  ALL_TOKEN_PERMISSIONS,
  appKey,
  MASTERCARD,
  ROUTING,
  revealEverything,
  type TokenBody,
  type TokenPage,
  VISA,
} from "#test/support/tokens.ts";

const svc = useService();

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const pub = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create", "token:update"],
  });
  const reader = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ALL_TOKEN_PERMISSIONS,
  });
  const revealer = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  return { api, ...tenant, pub, reader, revealer };
}

const card = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: "123" };

describe("POST /tokens", () => {
  it("tokenizes a card and answers it masked, without the cvc", async () => {
    const { api, pub } = await setup();

    const res = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card", data: card } });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: "card",
      containers: ["/pci/high/"],
      data: { number: "XXXXXXXXXXXX4242", expiration_month: 12, expiration_year: 2030 },
    });
    // A fingerprint is shown only with reveal (issue 10: to a masked caller it is an oracle for the value).
    expect(res.body).not.toHaveProperty("fingerprint");
    expect(JSON.stringify(res.body)).not.toContain(VISA);
    expect(JSON.stringify(res.body.data)).not.toContain("123");
  });

  it("reveals data and cvc to a revealing rule, and stops showing the cvc after an hour", async () => {
    const { api, pub, revealer } = await setup();
    const created = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card", data: card } });

    const fresh = await api.get<TokenBody>(`/tokens/${created.body.id}`, { key: revealer });
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3601 } });
    const later = await api.get<TokenBody>(`/tokens/${created.body.id}`, { key: revealer });

    expect(fresh.body.data).toEqual(card);
    expect(later.body.data).toEqual({ number: VISA, expiration_month: 12, expiration_year: 2030 });
  });

  it("keeps a cvc sent as an integer a number and a 0-padded string a string, each for one hour", async () => {
    const { api, pub, revealer } = await setup();
    const numeric = { ...card, cvc: 123 };
    const padded = { ...card, cvc: "0123" };
    const created = await Promise.all(
      [numeric, padded].map((data) =>
        api.post<TokenBody>("/tokens", { key: pub, body: { type: "card", data } }),
      ),
    );
    const read = () =>
      Promise.all(created.map((c) => api.get<TokenBody>(`/tokens/${c.body.id}`, { key: revealer })));

    const fresh = await read();
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3601 } });
    const later = await read();

    expect(created.map((c) => c.status)).toEqual([201, 201]);
    expect(fresh.map((r) => r.body.data)).toEqual([numeric, padded]);
    expect(later.map((r) => r.body.data)).toEqual([
      { number: VISA, expiration_month: 12, expiration_year: 2030 },
      { number: VISA, expiration_month: 12, expiration_year: 2030 },
    ]);
  });

  it("keeps the type of a cvc changed by PATCH", async () => {
    const { api, pub, revealer } = await setup();
    const created = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card", data: card } });

    const patched = await api.patch(`/tokens/${created.body.id}`, {
      key: pub,
      body: { data: { cvc: 4567 } },
      headers: { "content-type": "application/merge-patch+json" },
    });
    const read = await api.get<TokenBody>(`/tokens/${created.body.id}`, { key: revealer });

    expect(patched.status).toBe(200);
    expect(read.body.data).toEqual({ ...card, cvc: 4567 });
  });

  it.each([
    [12, "an integer that lost its leading 0"],
    [12345, "five digits"],
    [123.5, "not an integer"],
    [-123, "negative"],
    ["12a", "not digits"],
  ] as [unknown, string][])("refuses a cvc of %j (%s) with 400 on data.cvc", async (cvc) => {
    const { api, pub } = await setup();

    const res = await api.post("/tokens", { key: pub, body: { type: "card", data: { number: VISA, cvc } } });

    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveProperty(["data.cvc"]);
    expect(bodyText(res.body)).not.toContain(VISA);
  });

  it.each([
    ["card", { number: "4242424242424241" }, "data.number"],
    ["card", { number: VISA, expiration_month: 13 }, "data.expiration_month"],
    ["card", { number: VISA, expiration_year: 30 }, "data.expiration_year"],
    ["card", { number: VISA, cvc: "12345" }, "data.cvc"],
    ["card", { number: "4242-4242-4242-4242" }, "data.number"],
    ["card", { expiration_month: 1 }, "data.number"],
    ["bank", { routing_number: "021000022", account_number: "1234" }, "data.routing_number"],
    ["bank", { routing_number: ROUTING, account_number: "123456789012345678" }, "data.account_number"],
    ["card_number", "1234", "data"],
    ["us_bank_routing_number", "123456789", "data"],
    ["social_security_number", "000-12-3456", "data"],
    ["employer_id_number", "98-76", "data"],
  ])("refuses a %s with invalid data (%j) with 400 on %s", async (type, data, field) => {
    const { api, pub } = await setup();

    const res = await api.post("/tokens", { key: pub, body: { type, data } });

    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveProperty([field]);
    expect(bodyText(res.body)).not.toContain(
      typeof data === "string" ? data : String((data as { number?: string }).number ?? "§"),
    );
  });

  it("refuses an unknown type, missing data, bad containers, metadata and ids", async () => {
    const { api, pub } = await setup();
    const post = (body: unknown) => api.post("/tokens", { key: pub, body });

    const results = await Promise.all([
      post({ type: "galaxy", data: "x" }),
      post({ type: "token" }),
      post({ type: "token", data: "x", containers: ["nope"] }),
      post({ type: "token", data: "x", containers: ["/a/", "/b/"] }),
      post({ type: "token", data: "x", metadata: { n: 1 } }),
      post({ type: "token", data: "x", id: "a/b/c" }),
      post({ type: "token", data: "x", id: "ab" }),
      post({ type: "token", data: "x", expires_at: "someday" }),
      post({ type: "token", data: "x", expires_at: "1/1/2000" }),
    ]);

    expect(results.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400, 400, 400, 400]);
    expect(results[0]?.body.errors).toHaveProperty(["type"]);
    expect(results[5]?.body.errors).toHaveProperty(["id"]);
    expect(results[7]?.body.errors).toHaveProperty(["expires_at"]);
  });

  it("accepts a literal id once (409 after), and alias expressions for ids", async () => {
    const { api, pub } = await setup();

    const first = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "x", id: "my-token-1" },
    });
    const again = await api.post("/tokens", {
      key: pub,
      body: { type: "token", data: "y", id: "my-token-1" },
    });
    const alias = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card_number", data: VISA, id: "{{ data | alias_preserve_format }}" },
    });

    expect(first.status).toBe(201);
    expect(first.body.id).toBe("my-token-1");
    expect(again.status).toBe(409);
    expect(alias.status).toBe(201);
    expect(alias.body.id).toMatch(/^\d{16}$/);
    expect(alias.body.id).not.toBe(VISA);
  });

  it("answers a hostile expression with 400, and the service stays healthy", async () => {
    const { api, pub } = await setup();

    const loop = await api.post("/tokens", {
      key: pub,
      body: { type: "token", data: "x", mask: "{% for i in (1..100000000) %}{{ i }}{% endfor %}" },
    });
    const include = await api.post("/tokens", {
      key: pub,
      body: { type: "token", data: "x", mask: "{% include '/etc/passwd' %}" },
    });
    const health = await api.get("/healthz");

    expect(loop.status).toBe(400);
    expect(include.status).toBe(400);
    expect(health.status).toBe(200);
  });

  it("deduplicates by fingerprint when asked, also under concurrent creates", async () => {
    // Deduplication hands the existing token back only to a key that may read it (issue 10).
    const { api, reader: pub } = await setup();
    const body = {
      type: "card",
      data: { number: MASTERCARD, expiration_month: 1, expiration_year: 2031 },
      deduplicate_token: true,
    };

    const first = await api.post<TokenBody>("/tokens", { key: pub, body });
    const second = await api.post<TokenBody>("/tokens", { key: pub, body });
    const notDeduped = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { ...body, deduplicate_token: false },
    });
    const raced = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.post<TokenBody>("/tokens", {
          key: pub,
          body: { type: "token", data: { ssn: "x" }, deduplicate_token: true },
        }),
      ),
    );

    expect(second.body.id).toBe(first.body.id);
    // Deduplicated server-side; a masked answer carries no fingerprint (issue 10).
    expect(second.body).not.toHaveProperty("fingerprint");
    expect(notDeduped.body.id).not.toBe(first.body.id);
    expect(new Set(raced.map((r) => r.body.id)).size).toBe(1);
    expect(raced.every((r) => r.status === 201)).toBe(true);
  });

  it("finds a token created without deduplication when a later create asks for it", async () => {
    const { api, reader: pub } = await setup();
    const body = { type: "card_number", data: "4000056655665556" };

    const plain = await api.post<TokenBody>("/tokens", { key: pub, body });
    const repeat = await api.post<TokenBody>("/tokens", { key: pub, body });
    const deduped = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { ...body, deduplicate_token: true },
    });

    expect(repeat.body.id).not.toBe(plain.body.id);
    expect(deduped.body.id).toBe(plain.body.id);
  });

  it("lets the next create without deduplication claim a value whose claiming token was deleted", async () => {
    const { api, reader } = await setup();
    const body = { type: "card_number", data: "4000002500003155" };

    const first = await api.post<TokenBody>("/tokens", { key: reader, body });
    const repeat = await api.post<TokenBody>("/tokens", { key: reader, body });
    const deleted = await api.delete(`/tokens/${first.body.id}`, { key: reader });
    const next = await api.post<TokenBody>("/tokens", { key: reader, body });
    const deduped = await api.post<TokenBody>("/tokens", {
      key: reader,
      body: { ...body, deduplicate_token: true },
    });

    expect(deleted.status).toBe(204);
    expect(repeat.body.id).not.toBe(first.body.id);
    // The repeat found the value claimed by the first; once that claim is gone, the next create takes it.
    expect(deduped.body.id).toBe(next.body.id);
  });

  it("claims no fingerprint for a create refused because its id is taken", async () => {
    const { api, reader } = await setup();
    const create = (body: Record<string, unknown>) => api.post<TokenBody>("/tokens", { key: reader, body });
    const taken = await create({ id: "claim-id-taken", type: "card_number", data: "4000056655665556" });
    const refused = await create({ id: "claim-id-taken", type: "card_number", data: "5555555555554444" });
    const deduped = await create({ type: "card_number", data: "5555555555554444", deduplicate_token: true });

    expect(taken.status).toBe(201);
    expect(refused.status).toBe(409);
    expect(deduped.status).toBe(201);
    expect(deduped.body.id).not.toBe("claim-id-taken");
  });

  it("stores no plaintext of data, cvc, fingerprint input or search values", async () => {
    const { api, pub } = await setup();
    await api.post("/tokens", {
      key: pub,
      body: {
        type: "card",
        data: { number: "4000056655665556", cvc: "987", expiration_month: 3, expiration_year: 2032 },
        search_indexes: ["{{ data.number | last4 }}"],
      },
    });
    await api.post("/tokens", {
      key: pub,
      body: { type: "token", data: { secret: "plain-text-marker-XYZ" } },
    });

    const scan = await svc.service.deps.dynamo.send(
      new ScanCommand({ TableName: svc.service.deps.config.tableName }),
    );
    const raw = JSON.stringify(scan.Items);

    expect(raw).not.toContain("4000056655665556");
    expect(raw).not.toContain("plain-text-marker-XYZ");
    expect(raw).not.toMatch(/"987"/);
    // The search value, last4, as a whole string value: a random id may end in 5556 too.
    expect(raw).not.toMatch(/"5556"/);
  });
});

describe("reading tokens", () => {
  it("applies access rules: redact, mask, reveal, and 403 without a matching rule", async () => {
    const { api, pub, managementKey } = await setup();
    const pci = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "card_number", data: VISA } });
    const bank = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "bank", data: { routing_number: ROUTING, account_number: "12345678" } },
    });
    const general = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: { a: 1 } },
    });
    const ruled = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/pci/", transform: "redact", permissions: ["token:read"] },
        { priority: 2, container: "/bank/", transform: "mask", permissions: ["token:read"] },
        { priority: 3, container: "/bank/", transform: "reveal", permissions: ["token:read"] },
      ],
    });

    const redacted = await api.get<TokenBody>(`/tokens/${pci.body.id}`, { key: ruled });
    const masked = await api.get<TokenBody>(`/tokens/${bank.body.id}`, { key: ruled });
    const forbidden = await api.get(`/tokens/${general.body.id}`, { key: ruled });
    const list = await api.get<TokenPage>("/tokens", { key: ruled });

    expect(redacted.status).toBe(200);
    expect(redacted.body).not.toHaveProperty("data");
    expect(masked.body.data).toEqual({ routing_number: ROUTING, account_number: "XXXX5678" });
    expect(forbidden.status).toBe(403);
    expect(list.body.pagination.total_items).toBe(2);
    expect(list.body.data.map((t) => t.id).sort()).toEqual([pci.body.id, bank.body.id].sort());
  });

  it("masks for plain token:read, returns no data for a token without a mask, and refuses keys without it", async () => {
    const { api, pub, reader } = await setup();
    const ssn = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "social_security_number", data: "123-45-6789" },
    });
    const plain = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "token", data: "hello" } });

    const maskedSsn = await api.get<TokenBody>(`/tokens/${ssn.body.id}`, { key: reader });
    const noMask = await api.get<TokenBody>(`/tokens/${plain.body.id}`, { key: reader });
    const publicRead = await api.get(`/tokens/${ssn.body.id}`, { key: pub });

    expect(maskedSsn.body.data).toBe("XXXXXXX6789");
    expect(noMask.status).toBe(200);
    expect(noMask.body).not.toHaveProperty("data");
    expect(publicRead.status).toBe(403);
  });

  it("answers 404 for another tenant's token on every operation", async () => {
    const { api, pub } = await setup();
    const other = await setup();
    const token = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "token", data: "mine" } });

    const results = await Promise.all([
      api.get(`/tokens/${token.body.id}`, { key: other.revealer }),
      api.patch(`/tokens/${token.body.id}`, {
        key: other.revealer,
        body: { metadata: { a: "b" } },
        headers: { "content-type": "application/merge-patch+json" },
      }),
      api.delete(`/tokens/${token.body.id}`, { key: other.revealer }),
    ]);
    const list = await api.get<TokenPage>(`/tokens?id=${token.body.id}`, { key: other.revealer });

    expect(results.map((r) => r.status)).toEqual([404, 404, 404]);
    expect(list.body.data).toEqual([]);
  });

  it("filters lists by repeated id and type and by case-insensitive metadata, ANDed", async () => {
    const { api, pub, revealer } = await setup();
    const make = (type: string, data: unknown, metadata?: Record<string, string>) =>
      api.post<TokenBody>("/tokens", { key: pub, body: { type, data, metadata } });
    const a = await make("token", "a", { Customer: "ACME", tier: "gold" });
    const b = await make("token", "b", { customer: "acme", tier: "silver" });
    const c = await make("card_number", VISA, { customer: "Acme" });
    await make("token", "d");

    const byIds = await api.get<TokenPage>(`/tokens?id=${a.body.id}&id=${c.body.id}`, { key: revealer });
    const byTypes = await api.get<TokenPage>("/tokens?type=card_number&type=bank", { key: revealer });
    const byMeta = await api.get<TokenPage>("/tokens?metadata.customer=aCmE", { key: revealer });
    const anded = await api.get<TokenPage>("/tokens?metadata.customer=acme&metadata.tier=GOLD", {
      key: revealer,
    });
    const all = await api.get<TokenPage>("/tokens?size=2", { key: revealer });

    expect(byIds.status, JSON.stringify(byIds.body)).toBe(200);
    expect(byIds.body.data.map((t) => t.id).sort()).toEqual([a.body.id, c.body.id].sort());
    expect(byTypes.status, JSON.stringify(byTypes.body)).toBe(200);
    expect(byTypes.body.data.map((t) => t.id)).toEqual([c.body.id]);
    expect(byMeta.body.pagination.total_items).toBe(3);
    expect(anded.body.data.map((t) => t.id)).toEqual([a.body.id]);
    expect(all.body.pagination).toMatchObject({ total_items: 4, total_pages: 2, page_size: 2 });
    expect(b.status).toBe(201);
  });
});

describe("expiry", () => {
  it("reads the spec's expires_at formats and answers ISO 8601", async () => {
    const { api, pub } = await setup();
    const make = (expires_at: string) =>
      api.post<TokenBody>("/tokens", { key: pub, body: { type: "token", data: "x", expires_at } });

    const withOffset = await make("12/31/2099 11:59:59 PM +02:00");
    const shortDate = await make("1/2/2099");
    const iso = await make("2099-05-06T07:08:09Z");

    expect(withOffset.body.expires_at).toBe("2099-12-31T21:59:59.000Z");
    expect(shortDate.body.expires_at).toBe("2099-01-02T00:00:00.000Z");
    expect(iso.body.expires_at).toBe("2099-05-06T07:08:09.000Z");
  });

  it("makes an expired token 404 at once and leaves it out of lists", async () => {
    const { api, pub, revealer } = await setup();
    const soon = new Date(svc.service.deps.clock.now().getTime() + 10 * 60_000).toISOString();
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "x", expires_at: soon },
    });
    await api.post("/tokens", { key: pub, body: { type: "token", data: "keeps" } });
    const before = await api.get(`/tokens/${token.body.id}`, { key: revealer });

    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3 * 3600 } });
    const after = await api.get(`/tokens/${token.body.id}`, { key: revealer });
    const list = await api.get<TokenPage>("/tokens", { key: revealer });

    expect(before.status).toBe(200);
    expect(after.status).toBe(404);
    expect(list.body.data.map((t) => t.id)).not.toContain(token.body.id);
    expect(list.body.pagination.total_items).toBe(1);
  });
});

describe("PATCH and DELETE /tokens/{id}", () => {
  const mergePatch = { "content-type": "application/merge-patch+json" };

  it("merge-patches data, mask and metadata, replaces the rest, and answers masked like a read", async () => {
    const { api, pub, revealer } = await setup();
    const created = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: {
        type: "card",
        data: { number: VISA, expiration_month: 1, expiration_year: 2030 },
        metadata: { a: "1", b: "2" },
      },
    });

    const patched = await api.patch<TokenBody>(`/tokens/${created.body.id}`, {
      key: pub,
      headers: mergePatch,
      body: { data: { expiration_month: 6 }, metadata: { a: null, c: "3" } },
    });
    const read = await api.get<TokenBody>(`/tokens/${created.body.id}`, { key: revealer });

    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({
      number: "XXXXXXXXXXXX4242",
      expiration_month: 6,
      expiration_year: 2030,
    });
    expect(read.body.data).toEqual({ number: VISA, expiration_month: 6, expiration_year: 2030 });
    expect(read.body.metadata).toEqual({ b: "2", c: "3" });
    expect(read.body.modified_at).toEqual(expect.any(String));
  });

  it("refuses PATCH without merge-patch+json (415) and invalid patched data (400), changing nothing", async () => {
    const { api, pub, revealer } = await setup();
    const created = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card", data: { number: VISA } },
    });

    const wrongType = await api.patch(`/tokens/${created.body.id}`, {
      key: pub,
      body: { metadata: { a: "b" } },
    });
    const badData = await api.patch(`/tokens/${created.body.id}`, {
      key: pub,
      headers: mergePatch,
      body: { data: { number: "1111" } },
    });
    const read = await api.get<TokenBody>(`/tokens/${created.body.id}`, { key: revealer });

    expect(wrongType.status).toBe(415);
    expect(badData.status).toBe(400);
    expect(read.body.data).toEqual({ number: VISA });
    expect(read.body.metadata).toBeUndefined();
  });

  it("needs reveal-level token:update on both containers to move a token", async () => {
    const { api, pub, managementKey } = await setup();
    // Reveal: a move changes who may see the data (issue 10; test/integration/attacks/container-move.test.ts).
    const mover = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/general/", transform: "reveal", permissions: ["token:update"] }],
    });
    const token = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "token", data: "x" } });

    const refused = await api.patch(`/tokens/${token.body.id}`, {
      key: mover,
      headers: mergePatch,
      body: { containers: ["/pci/"] },
    });
    const allowed = await api.patch<TokenBody>(`/tokens/${token.body.id}`, {
      key: mover,
      headers: mergePatch,
      body: { containers: ["/general/low/"] },
    });

    expect(refused.status).toBe(403);
    expect(allowed.status).toBe(200);
    expect(allowed.body.containers).toEqual(["/general/low/"]);
  });

  it("deletes with token:delete only, then answers 404", async () => {
    const { api, pub, reader } = await setup();
    const token = await api.post<TokenBody>("/tokens", { key: pub, body: { type: "token", data: "x" } });

    const refused = await api.delete(`/tokens/${token.body.id}`, { key: pub });
    const deleted = await api.delete(`/tokens/${token.body.id}`, { key: reader });
    const after = await api.get(`/tokens/${token.body.id}`, { key: reader });

    expect(refused.status).toBe(403);
    expect(deleted.status).toBe(204);
    expect(after.status).toBe(404);
  });

  it("writes an audit entry per operation, typed card/bank/token, without data", async () => {
    const { api, pub, reader, managementKey } = await setup();
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card", data: { number: VISA, cvc: "321" } },
    });
    await api.get(`/tokens/${token.body.id}`, { key: reader });
    await api.patch(`/tokens/${token.body.id}`, {
      key: pub,
      headers: mergePatch,
      body: { metadata: { x: "y" } },
    });
    await api.delete(`/tokens/${token.body.id}`, { key: reader });

    const logs = await api.get<{ data: { entity_type: string; operation: string }[] }>(
      `/logs?entity_id=${token.body.id}`,
      { key: managementKey },
    );

    // The PATCH answer carries (masked) data: it is audited as a read too (issue 10).
    expect(logs.body.data.map((l) => l.operation)).toEqual(["delete", "read", "update", "read", "create"]);
    expect(logs.body.data.every((l) => l.entity_type === "card")).toBe(true);
    expect(JSON.stringify(logs.body)).not.toContain(VISA);
    expect(JSON.stringify(logs.body)).not.toMatch(/"321"|cvc/);
  });
});
