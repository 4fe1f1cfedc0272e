import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, revealEverything, type TokenBody } from "#test/support/tokens.ts";

/**
 * Attack: the 64 KB limit on token data held only where the create body was validated. A PATCH `data` (or a
 * merge of two halves each under the limit) stored any size the body limit let through, in a transaction too,
 * and multi-byte characters counted once each, so a "64 KB" create kept up to 192 KB. Every write now checks
 * the data it seals, in UTF-8 bytes.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

async function setup() {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const key = await appKey(api, managementKey, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", {
    key,
    body: { type: "token", data: { a: "x".repeat(40_000) } },
  });
  expect(token.status).toBe(201);
  const stored = async () => (await api.get<TokenBody>(`/tokens/${token.body.id}`, { key })).body.data;
  return { api, key, id: token.body.id, stored };
}

describe("attack: storing token data past its size limit", () => {
  it("refuses a PATCH whose data, or whose merge result, is over 64 KB, and keeps the data", async () => {
    const { api, key, id, stored } = await setup();

    const whole = await api.patch(`/tokens/${id}`, {
      key,
      headers: mergePatch,
      body: { data: "y".repeat(100 * 1024) },
    });
    const merged = await api.patch(`/tokens/${id}`, {
      key,
      headers: mergePatch,
      body: { data: { b: "y".repeat(40_000) } },
    });

    expect([whole.status, merged.status]).toEqual([400, 400]);
    expect(whole.headers.get("content-type")).toContain("application/problem+json");
    expect(await stored()).toEqual({ a: "x".repeat(40_000) });
  });

  it("refuses the same PATCH inside a transaction, and the commit changes nothing", async () => {
    const { api, key, id, stored } = await setup();
    const txn = await api.post<{ id: string }>("/transactions", { key });

    const res = await api.patch(`/tokens/${id}`, {
      key,
      headers: { ...mergePatch, "svc-transaction-id": txn.body.id },
      body: { data: { b: "y".repeat(40_000) } },
    });
    const commit = await api.post(`/transactions/${txn.body.id}/commit`, { key });

    expect(res.status).toBe(400);
    expect(commit.status).toBe(200);
    expect(await stored()).toEqual({ a: "x".repeat(40_000) });
  });

  it("counts bytes, not characters: 30,000 '€' (90 KB) are refused on create", async () => {
    const { api, key } = await setup();

    const res = await api.post("/tokens", { key, body: { type: "token", data: "€".repeat(30_000) } });
    const list = await api.get<{ data: TokenBody[] }>("/tokens", { key });

    expect(res.status).toBe(400);
    expect(list.body.data).toHaveLength(1);
  });

  it("refuses a reactor's tokenize of data over 64 KB, and stores nothing", async () => {
    const reactor = await createReactor(svc, {
      formula: {
        name: "Big",
        code: `module.exports = async () => ({ tokenize: { t: { type: "token", data: "€".repeat(30000) } } });`,
      },
      permissions: ALL_TOKEN_PERMISSIONS,
    });

    const res = await reactor.api.post(`/reactors/${reactor.reactorId}/react`, {
      key: reactor.app.key,
      body: { args: {} },
    });
    const list = await reactor.api.get<{ data: TokenBody[] }>("/tokens", { key: reactor.app.key });

    expect(res.status).toBe(400);
    expect(list.body.data).toEqual([]);
  });
});
