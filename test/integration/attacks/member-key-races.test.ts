import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { startLocalService } from "#functions/local.ts";
import type { Authenticator } from "#shared/domain/authentication.ts";
import { acceptInvitation } from "#shared/domain/members.ts";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox, joinMember as joinTenant } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";
import { itemsNaming, scanTable } from "#test/support/table-scan.ts";

const svc = useService();

type Created = { id: string; key: string };
const joinMember = (api: Client, ownerKey: string) => joinTenant(svc, api, ownerKey);
async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const reader = await api.post<Created>("/applications", {
    key: tenant.managementKey,
    body: { name: "reader", type: "private", permissions: ["token:read"] },
  });
  return { api, ...tenant, readerId: reader.body.id };
}

describe("attack: keys added at the same moment", () => {
  it("an application never holds more than 20 keys, however many are added at once, and can still be deleted", async () => {
    const { api, managementKey, readerId } = await setup();
    const answers = await Promise.all(
      Array.from({ length: 80 }, () =>
        api.post<Created>(`/applications/${readerId}/keys`, { key: managementKey }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    // Before: the limit was read before the write, so concurrent additions all passed it (50 and more keys).
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(20);
    expect(statuses.every((s) => s === 201 || s === 400 || s === 409)).toBe(true);
    const keys = await api.get<unknown[]>(`/applications/${readerId}/keys`, { key: managementKey });
    expect(keys.body.length).toBeLessThanOrEqual(20);
    expect((await api.delete(`/applications/${readerId}`, { key: managementKey })).status).toBe(204);
    const created = answers.filter((a) => a.status === 201).map((a) => a.body.key);
    for (const key of created) expect((await api.get("/tokens", { key })).status).toBe(401);
  });
});

describe("attack: keys minted through a member while it is being deleted", () => {
  it("every key the member minted answers 401 once the member is deleted, however close the mint", async () => {
    const { api, managementKey, readerId } = await setup();
    const admin = await joinMember(api, managementKey);
    const minted: string[] = [];
    let deleting = false;
    let after = 0;
    // Eight loops minting keys through the member's key until well after its deletion has answered.
    const loop = async () => {
      while (after < 6) {
        const answer = await api.post<Created>(`/applications/${readerId}/keys`, {
          key: admin.management_key,
        });
        if (answer.status === 201) minted.push(answer.body.key);
        else if (answer.status === 400) {
          // The 20-key limit: make room with the owner's key, so the loops go on minting.
          const keys = await api.get<{ id: string }[]>(`/applications/${readerId}/keys`, {
            key: managementKey,
          });
          for (const key of keys.body.slice(0, 10))
            await api.delete(`/applications/${readerId}/keys/${key.id}`, { key: managementKey });
        }
        if (deleting) after += 1;
      }
    };
    const loops = Array.from({ length: 8 }, loop);
    while (minted.length < 5) await new Promise((resolve) => setTimeout(resolve, 10));
    deleting = true;
    const removed = await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey });
    expect([200, 204]).toContain(removed.status);
    await Promise.all(loops);
    expect(minted.length).toBeGreaterThan(5);
    // Before: the deletion removed the keys it had listed; those minted meanwhile kept answering 200.
    const answers = await Promise.all(minted.map((key) => api.get("/tokens", { key })));
    expect(answers.map((a) => a.status).filter((s) => s !== 401)).toEqual([]);
  });
});

describe("a member who minted more keys than one write holds", () => {
  it("is deleted with every key it minted: those beyond the last write go first, in writes of their own", async () => {
    const { api, managementKey } = await setup();
    const admin = await joinMember(api, managementKey);
    const minted: string[] = [];
    for (const name of ["a", "b", "c"]) {
      const app = await api.post<Created>("/applications", {
        key: managementKey,
        body: { name, type: "private", permissions: ["token:read"] },
      });
      for (let i = 0; i < 19; i++)
        minted.push(
          (await api.post<Created>(`/applications/${app.body.id}/keys`, { key: admin.management_key })).body
            .key,
        );
    }
    expect((await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey })).status).toBe(204);
    const answers = await Promise.all(minted.map((key) => api.get("/tokens", { key })));
    expect(answers.map((a) => a.status).filter((s) => s !== 401)).toEqual([]);
    // Every key's two items are gone, not only refused by the lookup (which refuses a removed member's keys).
    const left = itemsNaming(await scanTable(svc), admin.id).filter(
      (item) => item.entity === "application_key",
    );
    expect(left).toEqual([]);
  });
});

describe("attack: an invitation accepted while its inviter is being deleted", () => {
  it("is refused by the accept's own write, even where the inviter is still cached as alive", async () => {
    const { api, managementKey } = await setup();
    const admin = await joinMember(api, managementKey);
    const email = `invitee${Date.now()}@example.com`;
    expect(
      (await api.post("/tenants/self/invitations", { key: admin.management_key, body: { email } })).status,
    ).toBe(201);
    const code = invitationFromOutbox(svc, email).code;
    const { deps } = svc.service;
    const inviter = (
      await api.get<{ id: string; tenant_id: string }>("/applications/key", { key: admin.management_key })
    ).body;
    const cached = await deps.applications.get(inviter.tenant_id, inviter.id);
    expect(cached).toBeDefined();
    expect([200, 204]).toContain(
      (await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey })).status,
    );
    // Another instance of the service, whose cache still holds the inviter's application as it was.
    const stale = { application: async () => cached } as unknown as Authenticator;
    // Before: the member was made, by an invitation whose inviter no longer existed.
    await expect(acceptInvitation({ ...deps, authenticator: stale }, { code })).rejects.toThrow(
      /invalid, used or expired/,
    );
  });
});

describe("attack: a narrow management key changing what it could not grant", () => {
  it("refuses to narrow, delete or revoke keys of an application holding more than the caller (403)", async () => {
    const { api, managementKey } = await setup();
    const create = (name: string, type: string, permissions: string[]) =>
      api.post<Created>("/applications", { key: managementKey, body: { name, type, permissions } });
    const prod = await create("prod", "private", ["token:read", "token:use"]);
    const narrow = await create("ci", "management", [
      "application:read",
      "application:update",
      "application:delete",
    ]);
    const ci = narrow.body.key;
    const prodKeys = await api.get<{ id: string }[]>(`/applications/${prod.body.id}/keys`, { key: ci });
    const emptied = await api.put(`/applications/${prod.body.id}`, {
      key: ci,
      body: { name: "prod", permissions: [], rules: [] },
    });
    const revoked = await api.delete(`/applications/${prod.body.id}/keys/${prodKeys.body[0]?.id}`, {
      key: ci,
    });
    const deleted = await api.delete(`/applications/${prod.body.id}`, { key: ci });
    // Before: 200, 204, 204: a key holding no token access took it from the application that does.
    expect([emptied.status, revoked.status, deleted.status]).toEqual([403, 403, 403]);
    expect((await api.get("/tokens", { key: prod.body.key })).status).toBe(200);
  });
});

describe("GET /logs with bounds the wrong way round", () => {
  it("answers 400 for start_date after end_date, and an empty page for a cursor below start_date", async () => {
    const { api, managementKey } = await setup();
    const reversed = await api.get("/logs?start_date=2030-01-01T00:00:00Z&end_date=2020-01-01T00:00:00Z", {
      key: managementKey,
    });
    expect(reversed.status).toBe(400);
    expect(reversed.headers.get("content-type")).toContain("application/problem+json");
    const below = await api.get<{ data: unknown[] }>("/logs?start=AAAA", { key: managementKey });
    // Before: 500 (DynamoDB refused the query).
    expect([200, 400]).toContain(below.status);
  });
});

/** Another warm instance of the service (in AWS: another Lambda of the same group), on the same table. */
const otherInstance = () =>
  startLocalService({
    port: 0,
    rootKey: svc.rootKey,
    dataDir: join(tmpdir(), `svc-test-${process.pid}`),
    masterKeyFile: join(tmpdir(), `svc-test-${process.pid}.master.key`),
    dynamodbEndpoint: inject("dynamodbEndpoint"),
    testClock: true,
    tableName: process.env.SVC_TABLE_NAME as string,
  });

describe("attack: a narrowed or revoked key on another warm instance", () => {
  it("neither undoes its narrowing nor creates what it lost from an instance that cached it before", async () => {
    const { api, managementKey } = await setup();
    const wide = ["application:create", "application:read", "application:update", "log:read"];
    const ci = await api.post<Created>("/applications", {
      key: managementKey,
      body: { name: "ci", type: "management", permissions: wide },
    });
    const other = await otherInstance();
    try {
      const there = client(other.url);
      // The leaked CI key is used there once: that instance now holds its principal (5 s by default).
      expect((await there.get("/applications/key", { key: ci.body.key })).status).toBe(200);
      // The owner narrows it here: answered 200, and this instance forgets the old grant at once.
      const narrowed = await api.put(`/applications/${ci.body.id}`, {
        key: managementKey,
        body: { name: "ci", permissions: ["application:read"] },
      });
      expect(narrowed.status).toBe(200);
      // On the other instance, within the cache window, the key puts its old grant back and makes a copy of it.
      const undo = await there.put(`/applications/${ci.body.id}`, {
        key: ci.body.key,
        body: { name: "ci", permissions: wide },
      });
      const copy = await there.post<Created>("/applications", {
        key: ci.body.key,
        body: { name: "ci-copy", type: "management", permissions: wide },
      });
      // Before: 200 and 201, and the narrowing was undone for good (the cache lapses; the stored grant stays).
      expect([undo.status, copy.status]).toEqual([403, 403]);
      const stored = await api.get<{ permissions: string[] }>(`/applications/${ci.body.id}`, {
        key: managementKey,
      });
      expect(stored.body.permissions).toEqual(["application:read"]);
    } finally {
      await other.stop();
    }
  });

  it("a revoked key mints no replacement for itself from an instance that cached it before", async () => {
    const { api, managementKey } = await setup();
    const ci = await api.post<Created & { keys: { id: string }[] }>("/applications", {
      key: managementKey,
      body: { name: "ci", type: "management", permissions: ["application:update", "log:read"] },
    });
    const other = await otherInstance();
    try {
      const there = client(other.url);
      expect((await there.get("/logs", { key: ci.body.key })).status).toBe(200);
      // The owner revokes the leaked key (rotation: the key, not the application), here.
      const revoked = await api.delete(`/applications/${ci.body.id}/keys/${ci.body.keys[0]?.id}`, {
        key: managementKey,
      });
      expect(revoked.status).toBe(204);
      expect((await api.get("/logs", { key: ci.body.key })).status).toBe(401);
      // Within the other instance's cache window the revoked key mints a key for its own application.
      const replacement = await there.post<Created>(`/applications/${ci.body.id}/keys`, { key: ci.body.key });
      // Before: 201, and the replacement answers for good after the revoked key's cache entry lapsed.
      expect(replacement.status).toBe(401);
      if (replacement.status === 201)
        expect((await api.get("/logs", { key: replacement.body.key })).status).toBe(401);
    } finally {
      await other.stop();
    }
  });

  it("a revoked key reads no webhook secret rotated to shut it out (review round 7: a GET answering a credential)", async () => {
    const { api, managementKey } = await setup();
    const ci = await api.post<Created & { keys: { id: string }[] }>("/applications", {
      key: managementKey,
      body: { name: "ci", type: "management", permissions: ["reactor:read", "reactor:update"] },
    });
    const other = await otherInstance();
    try {
      const there = client(other.url);
      expect((await there.get("/tenants/self/webhook-secret", { key: ci.body.key })).status).toBe(200);
      // The owner revokes the key and rotates the secret it knew, here.
      const revoked = await api.delete(`/applications/${ci.body.id}/keys/${ci.body.keys[0]?.id}`, {
        key: managementKey,
      });
      const rotated = await api.post<{ secret: string }>("/tenants/self/webhook-secret/rotate", {
        key: managementKey,
      });
      expect([revoked.status, rotated.status]).toEqual([204, 200]);
      const after = await there.get<{ secret?: string }>("/tenants/self/webhook-secret", {
        key: ci.body.key,
      });
      // Before: 200 with the new secret, from the instance's cached principal.
      expect(after.status).toBe(401);
      expect(after.body.secret).toBeUndefined();
    } finally {
      await other.stop();
    }
  });

  it("a member deleted elsewhere reads no proxy key rotated to shut them out (GET /proxies/{id}, GET /proxies)", async () => {
    const { api, managementKey } = await setup();
    const app = await api.post<Created>("/applications", {
      key: managementKey,
      body: { name: "proxy app", type: "private", permissions: ["token:use"] },
    });
    const proxy = await api.post<Created>("/proxies", {
      key: managementKey,
      body: {
        name: "open",
        destination_url: "https://example.com",
        require_auth: false,
        application: { id: app.body.id },
      },
    });
    expect(proxy.status).toBe(201);
    const member = await joinMember(api, managementKey);
    const other = await otherInstance();
    try {
      const there = client(other.url);
      expect((await there.get(`/proxies/${proxy.body.id}`, { key: member.management_key })).status).toBe(200);
      const removed = await api.delete(`/tenants/self/members/${member.id}`, { key: managementKey });
      const rotated = await api.post<{ key: string }>(`/proxies/${proxy.body.id}/key/rotate`, {
        key: managementKey,
      });
      expect([removed.status, rotated.status]).toEqual([204, 200]);
      // Before: 200 with the new open-proxy key (a link anyone holding it may use tokens through).
      const one = await there.get(`/proxies/${proxy.body.id}`, { key: member.management_key });
      const all = await there.get("/proxies", { key: member.management_key });
      expect([one.status, all.status]).toEqual([401, 401]);
      expect(JSON.stringify([one.body, all.body])).not.toContain(rotated.body.key);
    } finally {
      await other.stop();
    }
  });

  it("a revoked key reads no reactor configuration (a partner's API key) rotated to shut it out (round 8)", async () => {
    const { api, managementKey } = await setup();
    const reactor = await api.post<Created>("/reactors", {
      key: managementKey,
      body: {
        name: "charge",
        code: "module.exports = async (req) => ({ raw: 1 })",
        configuration: { API_KEY: "sk_live_OLD" },
      },
    });
    expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
    const ci = await api.post<Created & { keys: { id: string }[] }>("/applications", {
      key: managementKey,
      body: { name: "ci", type: "management", permissions: ["reactor:read"] },
    });
    const other = await otherInstance();
    try {
      const there = client(other.url);
      expect((await there.get(`/reactors/${reactor.body.id}`, { key: ci.body.key })).status).toBe(200);
      const revoked = await api.delete(`/applications/${ci.body.id}/keys/${ci.body.keys[0]?.id}`, {
        key: managementKey,
      });
      const rotated = await api.patch(`/reactors/${reactor.body.id}`, {
        key: managementKey,
        body: { configuration: { API_KEY: "sk_live_NEW" } },
        headers: { "content-type": "application/merge-patch+json" },
      });
      expect([revoked.status, rotated.status]).toEqual([204, 204]);
      // Before: 200 and 200, the new partner key in both answers.
      const one = await there.get(`/reactors/${reactor.body.id}`, { key: ci.body.key });
      const all = await there.get("/reactors", { key: ci.body.key });
      expect([one.status, all.status]).toEqual([401, 401]);
      expect(JSON.stringify([one.body, all.body])).not.toContain("sk_live_NEW");
    } finally {
      await other.stop();
    }
  });
});
