import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import {
  ALL_TOKEN_PERMISSIONS,
  appKey,
  MASTERCARD,
  revealEverything,
  type TokenBody,
  type TokenPage,
  VISA,
} from "#test/support/tokens.ts";

// Token rules that need neither HTTP nor DynamoDB (cvc lifetime, data checks, ids, deduplication, access rules,
// expiry, PATCH, DELETE) are tested on the in-memory stores: test/unit/token-rules.test.ts.
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

describe("PATCH and DELETE /tokens/{id}", () => {
  const mergePatch = { "content-type": "application/merge-patch+json" };

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
