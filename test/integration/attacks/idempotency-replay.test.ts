import { createHash } from "node:crypto";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";
import {
  ALL_TOKEN_PERMISSIONS,
  appKey,
  revealEverything,
  type TokenBody,
  VISA,
} from "#test/support/tokens.ts";

const svc = useService();
const codeFromOutbox = (email: string) => invitationFromOutbox(svc, email).code;

type Created = { id: string; key?: string };
type Accepted = { id: string; management_key?: string };

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  return { api, ...tenant };
}

const privateApp = (name: string) => ({ name, type: "private", permissions: ["token:read"] });

describe("attack: replaying another caller's idempotent answer", () => {
  it("never replays one credential's answer (holding a new API key) to another key of the same tenant", async () => {
    const { api, managementKey, managementAppId } = await setup();
    const secondKey = await api.post<Created>(`/applications/${managementAppId}/keys`, {
      key: managementKey,
    });
    const headers = { "svc-idempotency-key": "guessable-1" };

    const victim = await api.post<Created>("/applications", {
      key: managementKey,
      body: privateApp("a"),
      headers,
    });
    const attacker = await api.post<Created>("/applications", {
      key: String(secondKey.body.key),
      body: privateApp("a"),
      headers,
    });
    const victimRetry = await api.post<Created>("/applications", {
      key: managementKey,
      body: privateApp("a"),
      headers,
    });

    expect(victim.status).toBe(201);
    expect(attacker.status).toBe(201);
    expect(attacker.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(attacker.body.id).not.toBe(victim.body.id);
    expect(attacker.body.key).not.toBe(victim.body.key);
    expect(victimRetry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(victimRetry.body).toEqual(victim.body);
  });

  it("never replays an anonymous invitation acceptance (and its management key) to another body", async () => {
    const { api, managementKey } = await setup();
    const email = `replay${Date.now()}@example.com`;
    await api.post("/tenants/self/invitations", { key: managementKey, body: { email } });
    const headers = { "svc-idempotency-key": "accept-1" };
    const code = codeFromOutbox(email);

    const accepted = await api.post<Accepted>("/invitations/accept", { body: { code }, headers });
    const attacker = await api.post<Accepted>("/invitations/accept", {
      body: { code: "not-the-code" },
      headers,
    });
    const sameRequest = await api.post<Accepted>("/invitations/accept", { body: { code }, headers });

    expect(accepted.status).toBe(201);
    expect(attacker.status).toBe(400);
    expect(attacker.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(JSON.stringify(attacker.body)).not.toContain(String(accepted.body.management_key));
    expect(sameRequest.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(sameRequest.body).toEqual(accepted.body);
  });

  it("never replays one browser's answer to another holding the same public key: the card and the session key stay its own", async () => {
    const { api, managementKey } = await setup();
    // A public key is in every browser of the merchant; this one's rule even reveals what it creates.
    const reveal = [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:create"] }];
    const pub = await appKey(api, managementKey, {
      type: "public",
      permissions: ["token:create"],
      rules: reveal,
    });
    const headers = { "svc-idempotency-key": "order-1001" };
    const card = {
      type: "card",
      data: { number: VISA, expiration_month: 12, expiration_year: 2031, cvc: "123" },
    };

    const victim = await api.post<TokenBody>("/tokens", { key: pub, body: card, headers });
    const attacker = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "x" },
      headers,
    });
    const victimRetry = await api.post<TokenBody>("/tokens", { key: pub, body: card, headers });

    expect(victim.status, JSON.stringify(victim.body)).toBe(201);
    expect(attacker.status).toBe(201);
    expect(attacker.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(JSON.stringify(attacker.body)).not.toContain(VISA);
    expect(attacker.body.id).not.toBe(victim.body.id);
    // The victim's own retry (the same request) is still answered as first.
    expect(victimRetry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(victimRetry.body.id).toBe(victim.body.id);

    // A session key is a credential: to a public key it is never replayed, even for the same request.
    const sessionHeaders = { "svc-idempotency-key": "checkout-42" };
    type NewSession = { session_key: string; nonce: string };
    const mine = await api.post<NewSession>("/sessions", { key: pub, headers: sessionHeaders });
    const theirs = await api.post<NewSession>("/sessions", { key: pub, headers: sessionHeaders });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(theirs.body.session_key).not.toBe(mine.body.session_key);
    expect(theirs.body.nonce).not.toBe(mine.body.nonce);
  });

  it("replays the first result to the same key with another body (spec), and does not run that body", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "body-free" };

    const first = await api.post<Created>("/applications", {
      key: managementKey,
      body: privateApp("a"),
      headers,
    });
    const other = await api.post<Created>("/applications", {
      key: managementKey,
      body: privateApp("b"),
      headers,
    });
    const list = await api.get<{ data: { name: string }[] }>("/applications", { key: managementKey });

    expect(first.status).toBe(201);
    expect(other.status).toBe(201);
    expect(other.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(other.body).toEqual(first.body);
    expect(list.body.data.map((a) => a.name)).not.toContain("b");
  });

  it("never replays to the same key on another path (422), even with the same body", async () => {
    const { api, managementKey } = await setup();
    const writer = await appKey(api, managementKey, { type: "private", rules: revealEverything });
    const headers = { "svc-idempotency-key": "path-bound" };
    const one = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "one" } });
    const two = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "two" } });
    const patch = { ...headers, "content-type": "application/merge-patch+json" };

    const first = await api.patch(`/tokens/${one.body.id}`, {
      key: writer,
      body: { data: "1" },
      headers: patch,
    });
    const elsewhere = await api.patch<{ type?: string }>(`/tokens/${two.body.id}`, {
      key: writer,
      body: { data: "1" },
      headers: patch,
    });
    const untouched = await api.get<TokenBody>(`/tokens/${two.body.id}`, { key: writer });

    expect(first.status).toBe(200);
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.type).toContain("idempotency-key-mismatch");
    expect(bodyText(elsewhere.body)).not.toContain(one.body.id);
    expect(untouched.body.data).toBe("two");
  });

  it("keeps stored answers sealed: the raw DynamoDB item holds neither the key, the body nor its plain hash", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": `sealed-${Date.now()}` };
    const body = privateApp("sealed-app-name");
    const plainHash = createHash("sha256").update(JSON.stringify(body)).digest();
    const created = await api.post<Created>("/applications", { key: managementKey, body, headers });
    const tenant = await api.post<{ management_key: string }>("/tenants", {
      key: svc.rootKey,
      body: { name: "Root-created" },
      headers,
    });
    const { deps } = svc.service;

    const scanned = await deps.dynamo.send(
      new ScanCommand({
        TableName: deps.config.tableName,
        FilterExpression: "entity = :e",
        ExpressionAttributeValues: { ":e": "idempotency" },
      }),
    );
    const raw = JSON.stringify(scanned.Items);

    expect(created.status).toBe(201);
    expect(tenant.status).toBe(201);
    expect(scanned.Items?.length).toBeGreaterThan(0);
    expect(raw).not.toContain(String(created.body.key));
    expect(raw).not.toContain(created.body.id);
    expect(raw).not.toContain("sealed-app-name");
    expect(raw).not.toContain(tenant.body.management_key);
    expect(raw).not.toContain(plainHash.toString("hex"));
    expect(raw).not.toContain(plainHash.toString("base64url"));
  });

  it("never answers a write that joins a transaction with the replay of the same write made outside it", async () => {
    const { api, managementKey } = await setup();
    const writer = await appKey(api, managementKey, { type: "private", permissions: ALL_TOKEN_PERMISSIONS });
    const token = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "v1" } });
    const txn = await api.post<{ id: string }>("/transactions", { key: writer });
    const patch = { "content-type": "application/merge-patch+json", "svc-idempotency-key": "txn-bound" };
    const body = { metadata: { step: "2" } };

    const outside = await api.patch(`/tokens/${token.body.id}`, { key: writer, body, headers: patch });
    const inside = await api.patch<{ type?: string }>(`/tokens/${token.body.id}`, {
      key: writer,
      body,
      headers: { ...patch, "svc-transaction-id": txn.body.id },
    });
    const sameAgain = await api.patch(`/tokens/${token.body.id}`, { key: writer, body, headers: patch });

    expect(outside.status).toBe(200);
    expect(inside.status).toBe(422);
    expect(inside.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(inside.headers.get("content-type")).toContain("application/problem+json");
    expect(inside.body.type).toContain("idempotency-key-mismatch");
    expect(sameAgain.headers.get("svc-idempotent-replayed")).toBe("true");
  });

  it("never replays revealed data after the application's grant is downgraded: the retry runs under the new grant", async () => {
    const { api, managementKey } = await setup();
    const rule = (transform: string) => [
      { priority: 1, container: "/", transform, permissions: ["token:create", "token:read"] },
    ];
    const app = await api.post<Created>("/applications", {
      key: managementKey,
      body: { name: "checkout", type: "private", rules: rule("reveal") },
    });
    const key = String(app.body.key);
    const card = { number: VISA, expiration_month: 12, expiration_year: 2030 };
    const headers = { "svc-idempotency-key": "downgrade-1" };

    const first = await api.post<TokenBody>("/tokens", { key, body: { type: "card", data: card }, headers });
    const downgrade = await api.put(`/applications/${app.body.id}`, {
      key: managementKey,
      body: { name: "checkout", rules: rule("redact") },
    });
    const retry = await api.post<TokenBody>("/tokens", { key, body: { type: "card", data: card }, headers });
    const retryAgain = await api.post<TokenBody>("/tokens", {
      key,
      body: { type: "card", data: card },
      headers,
    });

    expect(first.status).toBe(201);
    expect(JSON.stringify(first.body)).toContain(VISA);
    expect(downgrade.status).toBe(200);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(JSON.stringify(retry.body)).not.toContain(VISA);
    expect(bodyText(retry.body)).not.toContain("4242");
    // Under the unchanged (new) grant the key replays again, as before.
    expect(retryAgain.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(retryAgain.body).toEqual(retry.body);
  });
});
