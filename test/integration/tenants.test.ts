import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

describe("tenants", () => {
  it("creates a tenant with the root key and answers with a management key shown once", async () => {
    const api = client(svc.url);

    const res = await api.post("/tenants", { key: svc.rootKey, body: { name: "Acme" } });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "Acme", id: expect.any(String), owner_id: expect.any(String) });
    expect(String(res.body.management_key)).toMatch(/^key_mgt_/);
    const self = await api.get("/tenants/self", { key: String(res.body.management_key) });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ id: res.body.id, name: "Acme" });
    expect(JSON.stringify(self.body)).not.toContain("key_mgt_");
  });

  it("refuses tenant creation without the root key", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);

    const none = await api.post("/tenants", { body: { name: "x" } });
    const wrong = await api.post("/tenants", { key: "key_root_wrong", body: { name: "x" } });
    const tenantKey = await api.post("/tenants", { key: managementKey, body: { name: "x" } });

    expect(none.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(tenantKey.status).toBe(401);
    expect(tenantKey.body.detail).toContain("root key");
    expect(tenantKey.headers.get("content-type")).toBe("application/problem+json");
  });

  it("does not accept the root key on tenant routes", async () => {
    const api = client(svc.url);

    const res = await api.get("/tenants/self", { key: svc.rootKey });

    expect(res.status).toBe(401);
  });

  it("validates the tenant name", async () => {
    const api = client(svc.url);

    const res = await api.post("/tenants", { key: svc.rootKey, body: { name: "" } });

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, errors: { name: expect.any(Array) } });
  });

  it("requires tenant:read for GET /tenants/self", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const app = await api.post("/applications", {
      key: managementKey,
      body: { name: "logs only", type: "management", permissions: ["log:read"] },
    });

    const res = await api.get("/tenants/self", { key: String(app.body.key) });

    expect(res.status).toBe(403);
    expect(res.body.detail).toContain("tenant:read");
  });
});
