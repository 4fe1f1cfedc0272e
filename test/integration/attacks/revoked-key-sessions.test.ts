/**
 * Attack: keep using what a stolen private key authorized after the key is revoked. Whoever holds a private key
 * can authorize sessions (up to 24 hours) for a public key of their own; revoking the stolen key must end those
 * sessions too, not leave them working until they expire.
 */
import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const token = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "secret" } });
  expect(token.status).toBe(201);
  const browser = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const authorizer = await api.post<{ id: string; key: string; key_id?: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "backend", type: "private", permissions: ["token:read"] },
  });
  expect(authorizer.status).toBe(201);
  const secondKey = await api.post<{ id: string; key: string }>(`/applications/${authorizer.body.id}/keys`, {
    key: tenant.managementKey,
  });
  expect(secondKey.status).toBe(201);
  const keys = await api.get<{ id: string }[] | { data: { id: string }[] }>(
    `/applications/${authorizer.body.id}/keys`,
    { key: tenant.managementKey },
  );
  const keyIds = (Array.isArray(keys.body) ? keys.body : keys.body.data).map((k) => k.id);
  const secondKeyId = secondKey.body.id;
  const firstKeyId = keyIds.find((id) => id !== secondKeyId) as string;

  /** A session created by the browser key and authorized (token:read, 24 hours) with `key`. */
  const sessionAuthorizedBy = async (key: string) => {
    const session = await api.post<{ session_key: string; nonce: string }>("/sessions", { key: browser });
    expect(session.status).toBe(201);
    const authorized = await api.post("/sessions/authorize", {
      key,
      body: {
        nonce: session.body.nonce,
        permissions: ["token:read"],
        expires_at: new Date(Date.now() + 23 * 3600 * 1000).toISOString(),
      },
    });
    expect(authorized.status).toBe(200);
    return session.body.session_key;
  };
  const read = (sessionKey: string) => api.get<TokenBody>(`/tokens/${token.body.id}`, { key: sessionKey });
  const revoke = (keyId: string) =>
    api.delete(`/applications/${authorizer.body.id}/keys/${keyId}`, { key: tenant.managementKey });
  return {
    api,
    authorizer: authorizer.body,
    secondKey: secondKey.body.key,
    firstKeyId,
    secondKeyId,
    sessionAuthorizedBy,
    read,
    revoke,
  };
}

describe("attack: sessions outliving the key that authorized them", () => {
  it("revoking a private key ends the sessions it authorized, at once", async () => {
    const { authorizer, firstKeyId, sessionAuthorizedBy, read, revoke } = await setup();
    const stolen = await sessionAuthorizedBy(authorizer.key);
    expect((await read(stolen)).status).toBe(200);

    expect((await revoke(firstKeyId)).status).toBe(204);

    const after = await read(stolen);
    expect(after.status).toBe(401);
    expect(after.headers.get("content-type")).toContain("application/problem+json");
  });

  it("leaves the sessions another key of the same application authorized working", async () => {
    const { authorizer, secondKey, firstKeyId, sessionAuthorizedBy, read, revoke } = await setup();
    const bySecond = await sessionAuthorizedBy(secondKey);
    const byFirst = await sessionAuthorizedBy(authorizer.key);

    expect((await revoke(firstKeyId)).status).toBe(204);

    expect((await read(bySecond)).status).toBe(200);
    expect((await read(byFirst)).status).toBe(401);
  });
});
