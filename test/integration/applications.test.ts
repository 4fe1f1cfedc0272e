import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

type App = { id: string; key?: string; keys: { id: string; key?: string }[]; type: string; rules: unknown[] };

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  return { api, ...tenant };
}

describe("applications", () => {
  it("creates an application whose key is shown once and stored only as a hash", async () => {
    const { api, managementKey } = await setup();

    const created = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "checkout", type: "private", permissions: ["token:read", "token:use"] },
    });

    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^key_pvt_[A-Za-z0-9_-]{32}$/);
    expect(created.body.keys[0]?.key).toBe(created.body.key);
    const read = await api.get<App>(`/applications/${created.body.id}`, { key: managementKey });
    expect(read.status).toBe(200);
    expect(read.body.keys).toHaveLength(1);
    expect(JSON.stringify(read.body)).not.toContain(String(created.body.key));
    const stored = await svc.service.deps.dynamo.send(
      new (await import("@aws-sdk/lib-dynamodb")).ScanCommand({
        TableName: svc.service.deps.config.tableName,
      }),
    );
    expect(JSON.stringify(stored.Items)).not.toContain(String(created.body.key));
  });

  it("prefixes keys by application type and can skip key creation", async () => {
    const { api, managementKey } = await setup();

    const pub = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "web", type: "public", permissions: ["token:create"] },
    });
    const mgt = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "ops", type: "management", permissions: ["log:read"] },
    });
    const keyless = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "later", type: "private", permissions: [], create_key: false },
    });

    expect(pub.body.key).toMatch(/^key_pub_/);
    expect(mgt.body.key).toMatch(/^key_mgt_/);
    expect(keyless.status).toBe(201);
    expect(keyless.body.key).toBeUndefined();
    expect(keyless.body.keys).toEqual([]);
  });

  it.each([
    ["public", ["token:read"]],
    ["public", ["token:delete"]],
    ["private", ["log:read"]],
    ["management", ["token:create"]],
    ["private", ["not:a:permission"]],
  ])("refuses a %s application holding %j with 400 and field errors", async (type, permissions) => {
    const { api, managementKey } = await setup();

    const res = await api.post("/applications", {
      key: managementKey,
      body: { name: "x", type, permissions },
    });

    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(Object.keys(res.body.errors as object).some((k) => k.startsWith("permissions"))).toBe(true);
  });

  it("validates access rules and stores valid ones", async () => {
    const { api, managementKey } = await setup();
    const rule = {
      description: "pci",
      priority: 1,
      container: "/PCI/",
      transform: "mask",
      permissions: ["token:read"],
    };

    const ok = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "rules", type: "private", rules: [rule] },
    });
    const noContainer = await api.post("/applications", {
      key: managementKey,
      body: { name: "r", type: "private", rules: [{ ...rule, container: undefined }] },
    });
    const badContainer = await api.post("/applications", {
      key: managementKey,
      body: { name: "r", type: "private", rules: [{ ...rule, container: "pci" }] },
    });
    const badPriority = await api.post("/applications", {
      key: managementKey,
      body: { name: "r", type: "private", rules: [{ ...rule, priority: 0 }] },
    });
    const duplicatePriority = await api.post("/applications", {
      key: managementKey,
      body: { name: "r", type: "private", rules: [rule, { ...rule, container: "/bank/" }] },
    });
    const publicRead = await api.post("/applications", {
      key: managementKey,
      body: { name: "r", type: "public", rules: [rule] },
    });
    const conditions = await api.post("/applications", {
      key: managementKey,
      body: {
        name: "r",
        type: "private",
        rules: [
          {
            ...rule,
            container: undefined,
            conditions: [{ attribute: "id", operator: "equals", value: "x" }],
          },
        ],
      },
    });

    expect(ok.status).toBe(201);
    expect(ok.body.rules).toEqual([{ ...rule, container: "/pci/" }]);
    expect(noContainer.status).toBe(400);
    expect(badContainer.body.errors).toHaveProperty(["rules.0.container"]);
    expect(badPriority.body.errors).toHaveProperty(["rules.0.priority"]);
    expect(duplicatePriority.body.errors).toHaveProperty(["rules.1.priority"]);
    expect(publicRead.body.errors).toHaveProperty(["rules.0.permissions"]);
    expect(conditions.body.errors).toHaveProperty(["rules.0.conditions"]);
  });

  it("lists, updates and deletes applications; deletion revokes their keys at once", async () => {
    const { api, managementKey, managementAppId } = await setup();
    const created = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "ops", type: "management", permissions: ["application:read"] },
    });
    const appKey = String(created.body.key);
    expect((await api.get("/applications", { key: appKey })).status).toBe(200);

    const list = await api.get<{ pagination: Record<string, number>; data: App[] }>("/applications", {
      key: managementKey,
    });
    const updated = await api.put<App & { name: string; permissions: string[] }>(
      `/applications/${created.body.id}`,
      { key: managementKey, body: { name: "ops2", permissions: ["log:read"] } },
    );
    const afterUpdate = await api.get("/applications", { key: appKey });
    const deleted = await api.delete(`/applications/${created.body.id}`, { key: managementKey });
    const afterDelete = await api.get("/logs", { key: appKey });
    const again = await api.delete(`/applications/${created.body.id}`, { key: managementKey });

    expect(list.body.pagination.total_items).toBe(2);
    expect(list.body.data.map((a) => a.id)).toEqual([managementAppId, created.body.id]);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "ops2", permissions: ["log:read"], type: "management" });
    expect(afterUpdate.status).toBe(403);
    expect(deleted.status).toBe(204);
    expect(afterDelete.status).toBe(401);
    expect(again.status).toBe(404);
  });

  it("returns the calling key's own application without any permission", async () => {
    const { api, managementKey } = await setup();
    const created = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "web", type: "public", permissions: ["token:create"] },
    });

    const own = await api.get<App>("/applications/key", { key: String(created.body.key) });

    expect(own.status).toBe(200);
    expect(own.body.id).toBe(created.body.id);
  });

  it("adds, lists, reads and revokes keys; a revoked key is refused immediately", async () => {
    const { api, managementKey } = await setup();
    const app = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "ops", type: "management", permissions: ["log:read"] },
    });

    const added = await api.post<{ id: string; key: string }>(`/applications/${app.body.id}/keys`, {
      key: managementKey,
    });
    const listed = await api.get<{ id: string }[]>(`/applications/${app.body.id}/keys`, {
      key: managementKey,
    });
    const one = await api.get(`/applications/${app.body.id}/keys/${added.body.id}`, { key: managementKey });
    const worksBefore = await api.get("/logs", { key: added.body.key });
    const revoked = await api.delete(`/applications/${app.body.id}/keys/${added.body.id}`, {
      key: managementKey,
    });
    const refusedAfter = await api.get("/logs", { key: added.body.key });
    const otherKeyStillWorks = await api.get("/logs", { key: String(app.body.key) });
    const goneKey = await api.get(`/applications/${app.body.id}/keys/${added.body.id}`, {
      key: managementKey,
    });

    expect(added.status).toBe(201);
    expect(added.body.key).toMatch(/^key_mgt_/);
    expect(listed.body.map((k) => k.id).sort()).toEqual([app.body.keys[0]?.id, added.body.id].sort());
    expect(JSON.stringify(listed.body)).not.toContain("key_mgt_");
    expect(one.body).toMatchObject({ id: added.body.id });
    expect(worksBefore.status).toBe(200);
    expect(revoked.status).toBe(204);
    expect(refusedAfter.status).toBe(401);
    expect(otherKeyStillWorks.status).toBe(200);
    expect(goneKey.status).toBe(404);
  });

  it("answers 404 for another tenant's applications and keys, and never lists them", async () => {
    const { api, managementKey } = await setup();
    const other = await createTenant(api, svc.rootKey, "Other");
    const theirs = await api.post<App>("/applications", {
      key: other.managementKey,
      body: { name: "theirs", type: "private", permissions: ["token:read"] },
    });
    const theirKeyId = theirs.body.keys[0]?.id;

    const responses = await Promise.all([
      api.get(`/applications/${theirs.body.id}`, { key: managementKey }),
      api.put(`/applications/${theirs.body.id}`, { key: managementKey, body: { name: "mine" } }),
      api.delete(`/applications/${theirs.body.id}`, { key: managementKey }),
      api.post(`/applications/${theirs.body.id}/keys`, { key: managementKey }),
      api.get(`/applications/${theirs.body.id}/keys`, { key: managementKey }),
      api.get(`/applications/${theirs.body.id}/keys/${theirKeyId}`, { key: managementKey }),
      api.delete(`/applications/${theirs.body.id}/keys/${theirKeyId}`, { key: managementKey }),
    ]);
    const list = await api.get<{ data: App[] }>("/applications", { key: managementKey });

    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(list.body.data.map((a) => a.id)).not.toContain(theirs.body.id);
    const stillThere = await api.get(`/applications/${theirs.body.id}`, { key: other.managementKey });
    expect(stillThere.status).toBe(200);
    expect((await api.get("/tenants/self", { key: String(theirs.body.key) })).status).toBe(403);
  });

  it("refuses keys without the permission for each application operation", async () => {
    const { api, managementKey } = await setup();
    const reader = await api.post<App>("/applications", {
      key: managementKey,
      body: { name: "reader", type: "management", permissions: ["application:read"] },
    });
    const key = String(reader.body.key);

    const responses = await Promise.all([
      api.post("/applications", { key, body: { name: "x", type: "public" } }),
      api.put(`/applications/${reader.body.id}`, { key, body: { name: "x" } }),
      api.delete(`/applications/${reader.body.id}`, { key }),
      api.post(`/applications/${reader.body.id}/keys`, { key }),
    ]);

    expect(responses.map((r) => r.status)).toEqual([403, 403, 403, 403]);
    expect(responses[0]?.body.detail).toContain("application:create");
  });
});
