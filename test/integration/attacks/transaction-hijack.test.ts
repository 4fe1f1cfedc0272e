import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
type Transaction = { id: string };

async function setup() {
  const { api, tenant, owner: writer } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const attacker = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create", "token:update"],
  });
  const token = await api.post<TokenBody>("/tokens", {
    key: writer,
    body: { type: "token", data: "before" },
  });
  expect(token.status).toBe(201);
  const open = async (key: string) => {
    const res = await api.post<Transaction>("/transactions", { key });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  return { api, ...tenant, writer, reader, attacker, token: token.body, open };
}

const expectNotFound = (res: { status: number; headers: Headers }) => {
  expect(res.status).toBe(404);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
};

describe("attack: using a transaction another credential opened", () => {
  it("a public key of the same tenant can neither roll back, commit nor join a private key's transaction", async () => {
    const { api, writer, reader, attacker, token, open } = await setup();
    const txn = await open(writer);
    const patched = await api.patch(`/tokens/${token.id}`, {
      key: writer,
      body: { data: "inside" },
      headers: { ...mergePatch, "svc-transaction-id": txn },
    });
    expect(patched.status).toBe(200);

    const rollback = await api.post(`/transactions/${txn}/rollback`, { key: attacker });
    const commit = await api.post(`/transactions/${txn}/commit`, { key: attacker });
    const joinCreate = await api.post<TokenBody>("/tokens", {
      key: attacker,
      body: { type: "token", data: "smuggled", id: "smuggled-into-txn" },
      headers: { "svc-transaction-id": txn },
    });
    const joinPatch = await api.patch(`/tokens/${token.id}`, {
      key: attacker,
      body: { metadata: { by: "attacker" } },
      headers: { ...mergePatch, "svc-transaction-id": txn },
    });
    const unknown = await api.post(`/transactions/${crypto.randomUUID()}/rollback`, { key: attacker });

    for (const res of [rollback, commit, joinCreate, joinPatch]) expectNotFound(res);
    // Exactly as if the transaction did not exist: nothing tells the attacker it does.
    expect(rollback.body).toMatchObject({
      status: 404,
      title: unknown.body.title,
      detail: unknown.body.detail,
    });

    // The opener's transaction is intact: its change is still pending, nothing was smuggled into it.
    const commitByOwner = await api.post(`/transactions/${txn}/commit`, { key: writer });
    const after = await api.get<TokenBody>(`/tokens/${token.id}`, { key: reader });
    const smuggled = await api.get(`/tokens/smuggled-into-txn`, { key: reader });
    expect(commitByOwner.status).toBe(200);
    expect(after.body.data).toBe("inside");
    expect(after.body.metadata?.by).toBeUndefined();
    expect(smuggled.status).toBe(404);
  });

  it("binds to the key, not the application: another key of the opener's own application gets 404", async () => {
    const { api, managementKey, writer, token } = await setup();
    const opened = await api.post<Transaction & { created_by: string }>("/transactions", { key: writer });
    const secondKey = await api.post<{ key: string }>(`/applications/${opened.body.created_by}/keys`, {
      key: managementKey,
    });
    expect(secondKey.status).toBe(201);
    const txn = opened.body.id;

    const join = await api.delete(`/tokens/${token.id}`, {
      key: secondKey.body.key,
      headers: { "svc-transaction-id": txn },
    });
    const rollback = await api.post(`/transactions/${txn}/rollback`, { key: secondKey.body.key });
    const own = await api.post(`/transactions/${txn}/rollback`, { key: writer });

    expectNotFound(join);
    expectNotFound(rollback);
    expect(own.status).toBe(200);
  });

  it("a session authorized by the opener's own application cannot join the opener's transaction", async () => {
    const { api, writer, reader, attacker, token, open } = await setup();
    const created = await api.post<{ session_key: string; nonce: string }>("/sessions", { key: attacker });
    const authorized = await api.post("/sessions/authorize", {
      key: writer,
      body: { nonce: created.body.nonce, permissions: ["token:update"] },
    });
    expect(authorized.status).toBe(200);
    const session = created.body.session_key;
    const txn = await open(writer);

    const join = await api.patch(`/tokens/${token.id}`, {
      key: session,
      body: { metadata: { by: "session" } },
      headers: { ...mergePatch, "svc-transaction-id": txn },
    });
    const commit = await api.post(`/transactions/${txn}/commit`, { key: writer });
    const after = await api.get<TokenBody>(`/tokens/${token.id}`, { key: reader });

    expectNotFound(join);
    expect(commit.status).toBe(200);
    expect(after.body.metadata?.by).toBeUndefined();
  });

  it("an SVC-TRANSACTION-ID no transaction could have (2,100 characters) is a 404 on every transactional write, not a 500", async () => {
    const { api, writer, token } = await setup();
    // Past DynamoDB's 2,048-byte key (TXN#<tenant>#<id>); a header of 8 KB passes API Gateway.
    const long = "a".repeat(2100);
    const create = await api.post("/tokens", {
      key: writer,
      body: { type: "token", data: "y" },
      headers: { "svc-transaction-id": long },
    });
    const patch = await api.patch(`/tokens/${token.id}`, {
      key: writer,
      body: { metadata: { a: "b" } },
      headers: { ...mergePatch, "svc-transaction-id": long },
    });
    const removed = await api.delete(`/tokens/${token.id}`, {
      key: writer,
      headers: { "svc-transaction-id": long },
    });
    // Before: 500 internal-error for each.
    for (const res of [create, patch, removed]) expectNotFound(res);
    const after = await api.get<TokenBody>(`/tokens/${token.id}`, { key: writer });
    expect(after.status).toBe(200);
    expect(after.body.metadata).toBeUndefined();
  });
});
