import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { joinMember } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

type Log = {
  tenant_id: string;
  actor_id?: string;
  actor_type?: string;
  entity_type: string;
  entity_id: string;
  operation: string;
  message: string;
  created_at: string;
};
type Page = { pagination: { total_items: number; next?: string }; data: Log[] };

describe("audit log", () => {
  it("records each create, read, update and delete of applications and keys, newest first, without secrets", async () => {
    const api = client(svc.url);
    const { managementKey, managementAppId, tenantId } = await createTenant(api, svc.rootKey);
    const app = await api.post<{ id: string; key: string }>("/applications", {
      key: managementKey,
      body: { name: "web", type: "public", permissions: ["token:create"] },
    });
    await api.get(`/applications/${app.body.id}`, { key: managementKey });
    await api.put(`/applications/${app.body.id}`, { key: managementKey, body: { name: "web2" } });
    const key = await api.post<{ id: string; key: string }>(`/applications/${app.body.id}/keys`, {
      key: managementKey,
    });
    await api.delete(`/applications/${app.body.id}/keys/${key.body.id}`, { key: managementKey });
    await api.delete(`/applications/${app.body.id}`, { key: managementKey });

    const logs = await api.get<Page>(`/logs?entity_id=${app.body.id}`, { key: managementKey });
    const keyLogs = await api.get<Page>(`/logs?entity_id=${key.body.id}`, { key: managementKey });
    const all = await api.get<Page>("/logs?size=100", { key: managementKey });

    expect(logs.status).toBe(200);
    expect(logs.body.data.map((l) => l.operation)).toEqual(["delete", "update", "read", "create"]);
    expect(logs.body.data[0]).toMatchObject({
      tenant_id: tenantId,
      actor_id: managementAppId,
      actor_type: "application",
      entity_type: "application",
    });
    expect(keyLogs.body.data.map((l) => l.operation)).toEqual(["delete", "create"]);
    const text = JSON.stringify(all.body);
    expect(text).not.toContain(app.body.key);
    expect(text).not.toContain(key.body.key);
    expect(text).not.toContain(managementKey);
    expect(all.body.data.map((l) => l.entity_type)).toContain("tenant");
  });

  it("ends each revoked application's and key's own history with its revocation, when its member or application is deleted", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Audited");
    const member = await joinMember(svc, api, tenant.managementKey);
    // The member mints a CI application with a key, and a second key for it; the owner makes another one.
    const ci = await api.post<{ id: string; key: string; keys: { id: string }[] }>("/applications", {
      key: member.management_key,
      body: { name: "ci", type: "management", permissions: ["application:read"] },
    });
    const second = await api.post<{ id: string }>(`/applications/${ci.body.id}/keys`, {
      key: member.management_key,
    });
    const other = await api.post<{ id: string; keys: { id: string }[] }>("/applications", {
      key: tenant.managementKey,
      body: { name: "other", type: "management", permissions: ["application:read"] },
    });
    expect([ci.status, second.status, other.status]).toEqual([201, 201, 201]);
    const history = async (id: string) =>
      (await api.get<Page>(`/logs?entity_id=${id}`, { key: tenant.managementKey })).body.data.map(
        (l) => `${l.entity_type} ${l.operation}`,
      );

    expect(
      (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status,
    ).toBe(204);
    expect((await api.delete(`/applications/${other.body.id}`, { key: tenant.managementKey })).status).toBe(
      204,
    );

    // Before: each of these ended at "create", as if the keys still answered (lifecycle review).
    expect(await history(member.management_application_id)).toContain("application delete");
    // An application's first key is made with it (logged as the application's create).
    for (const keyId of [ci.body.keys[0]?.id as string, other.body.keys[0]?.id as string])
      expect(await history(keyId)).toEqual(["application_key delete"]);
    expect(await history(second.body.id)).toEqual(["application_key delete", "application_key create"]);
  });

  it("logs a key's revocation once when the key is deleted on its own while its member or application is being deleted", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Raced");
    const member = await joinMember(svc, api, tenant.managementKey);
    const history = async (id: string) =>
      (await api.get<Page>(`/logs?entity_id=${id}`, { key: tenant.managementKey })).body.data.map(
        (l) => l.operation,
      );
    const mint = async (key: string) => {
      const app = await api.post<{ id: string }>("/applications", {
        key,
        body: { name: "ci", type: "management", permissions: ["application:read"] },
      });
      const second = await api.post<{ id: string }>(`/applications/${app.body.id}/keys`, { key });
      return { app: app.body.id, key: second.body.id };
    };
    /** Runs `deletion`; its first transactional write waits for the key's own DELETE to commit first. */
    const raced = async (raced: { app: string; key: string }, deletion: () => Promise<number>) => {
      const dynamo = svc.service.deps.dynamo;
      const send = dynamo.send.bind(dynamo);
      let fired = false;
      const spy = vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
        if (!fired && command instanceof TransactWriteCommand) {
          fired = true;
          const own = await api.delete(`/applications/${raced.app}/keys/${raced.key}`, {
            key: tenant.managementKey,
          });
          expect(own.status).toBe(204);
        }
        return send(command as TransactWriteCommand);
      }) as typeof dynamo.send);
      try {
        expect(await deletion()).toBe(204);
      } finally {
        spy.mockRestore();
      }
      expect(fired).toBe(true);
    };

    const ofMember = await mint(member.management_key);
    await raced(ofMember, async () => {
      return (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status;
    });
    const ofApplication = await mint(tenant.managementKey);
    await raced(ofApplication, async () => {
      return (await api.delete(`/applications/${ofApplication.app}`, { key: tenant.managementKey })).status;
    });

    // It was: ["delete", "delete", "create"]: the deletion's write deleted the listing it had read, already gone.
    expect(await history(ofMember.key)).toEqual(["delete", "create"]);
    expect(await history(ofApplication.key)).toEqual(["delete", "create"]);
    expect(await history(ofApplication.app)).toEqual(["delete", "create"]);
  });

  it("filters by entity type and date range, and pages with totals and a cursor", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    for (let i = 0; i < 5; i++)
      await api.post("/applications", { key: managementKey, body: { name: `a${i}`, type: "public" } });
    const middle = (
      await api.post<{ now: string }>("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 60 } })
    ).body.now;
    for (let i = 0; i < 3; i++)
      await api.post("/applications", { key: managementKey, body: { name: `b${i}`, type: "public" } });

    const apps = await api.get<Page>("/logs?entity_type=application&size=4", { key: managementKey });
    const next = await api.get<Page>(
      `/logs?entity_type=application&size=4&start=${apps.body.pagination.next}`,
      {
        key: managementKey,
      },
    );
    const recent = await api.get<Page>(`/logs?start_date=${encodeURIComponent(middle)}`, {
      key: managementKey,
    });
    const older = await api.get<Page>(`/logs?end_date=${encodeURIComponent(middle)}&entity_type=tenant`, {
      key: managementKey,
    });
    const badDate = await api.get("/logs?start_date=yesterday", { key: managementKey });

    expect(apps.body.pagination.total_items).toBe(9);
    expect(apps.body.data).toHaveLength(4);
    expect(apps.body.data.every((l) => l.entity_type === "application")).toBe(true);
    expect(next.body.data).toHaveLength(4);
    expect(new Set([...apps.body.data, ...next.body.data].map((l) => l.created_at + l.entity_id)).size).toBe(
      8,
    );
    expect(recent.body.pagination.total_items).toBe(3);
    expect(recent.body.data.every((l) => l.created_at >= middle)).toBe(true);
    expect(older.body.pagination.total_items).toBe(1);
    expect(badDate.status).toBe(400);
  });

  it("never shows another tenant's entries and requires log:read", async () => {
    const api = client(svc.url);
    const mine = await createTenant(api, svc.rootKey);
    const other = await createTenant(api, svc.rootKey, "Other");
    const noLogs = await api.post<{ key: string }>("/applications", {
      key: mine.managementKey,
      body: { name: "x", type: "management", permissions: ["application:read"] },
    });

    const theirs = await api.get<Page>(`/logs?entity_id=${other.tenantId}`, { key: mine.managementKey });
    const all = await api.get<Page>("/logs?size=100", { key: mine.managementKey });
    const forbidden = await api.get("/logs", { key: noLogs.body.key });
    const forbiddenTypes = await api.get("/logs/entity-types", { key: noLogs.body.key });

    expect(theirs.body.data).toEqual([]);
    expect(all.body.data.every((l) => l.tenant_id === mine.tenantId)).toBe(true);
    expect(forbidden.status).toBe(403);
    expect(forbiddenTypes.status).toBe(403);
  });

  it("lists the entity types", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);

    const res = await api.get<{ display_name: string; value: string }[]>("/logs/entity-types", {
      key: managementKey,
    });

    expect(res.status).toBe(200);
    expect(res.body.map((t) => t.value)).toEqual(
      expect.arrayContaining(["application", "bank", "card", "proxy", "token"]),
    );
    expect(res.body.find((t) => t.value === "card")?.display_name).toBe("Card");
  });

  it("fails closed: a read whose log entry cannot be written answers an error, not the data", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const app = await api.post<{ id: string }>("/applications", {
      key: managementKey,
      body: { name: "web", type: "public" },
    });
    const auditLog = svc.service.deps.auditLog;
    const original = auditLog.append.bind(auditLog);
    auditLog.append = async () => {
      throw new Error("log store down");
    };

    const res = await api.get(`/applications/${app.body.id}`, { key: managementKey }).finally(() => {
      auditLog.append = original;
    });

    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain("web");
  });
});
