import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });
const mergePatch = { "content-type": "application/merge-patch+json" };

type Proxy = {
  id: string;
  key: string;
  name: string;
  destination_url: string;
  require_auth: boolean;
  application_id?: string;
  configuration?: Record<string, unknown>;
  request_transform?: { code: string };
};
type Page = { pagination: { total_items: number }; data: Proxy[] };

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const create = (body: Record<string, unknown>) =>
    api.post<Proxy>("/proxies", {
      key: tenant.managementKey,
      body: { name: "Stripe", destination_url: "https://api.example.com/v1", ...body },
    });
  return { api, ...tenant, create };
}

describe("proxies CRUD", () => {
  it("creates a proxy with a generated key, require_auth on by default, application_id in place of application", async () => {
    const { api, create, managementKey } = await setup();
    const app = await api.post<{ id: string }>("/applications", {
      key: managementKey,
      body: { name: "pvt", type: "private", permissions: ["token:use"] },
    });

    const created = await create({ application: { id: app.body.id }, configuration: { region: "eu" } });
    const read = await api.get<Proxy>(`/proxies/${created.body.id}`, { key: managementKey });
    const raw = await svc.service.deps.dynamo.send(
      new ScanCommand({ TableName: svc.service.deps.config.tableName }),
    );

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "Stripe",
      require_auth: true,
      application_id: app.body.id,
      configuration: { region: "eu" },
    });
    expect(created.body.key).toMatch(/^key_prx_/);
    expect(created.body).not.toHaveProperty("application");
    expect(read.body.key).toBe(created.body.key);
    expect(JSON.stringify(raw.Items)).not.toContain(created.body.key);
  });

  it.each([
    [{ name: "" }, "name"],
    [{ name: "x".repeat(201) }, "name"],
    [{ destination_url: "not a url" }, "destination_url"],
    [{ destination_url: "ftp://example.com" }, "destination_url"],
    [{ destination_url: "https://user:pw@example.com" }, "destination_url"],
    [{ request_transform: { code: "module.exports = function (" } }, "request_transform.code"],
    [{ application: { id: "00000000-0000-4000-8000-000000000000" } }, "application.id"],
  ])("refuses %j with 400 on %s", async (body, field) => {
    const { create } = await setup();

    const res = await create(body);

    expect(res.status).toBe(400);
    expect(res.body).toHaveProperty(["errors", field]);
  });

  it("refuses an application id longer than any id with 400 on PATCH too (found by the fuzz: was a 500)", async () => {
    const { api, create, managementKey } = await setup();
    const proxy = await create({});

    const res = await api.patch(`/proxies/${proxy.body.id}`, {
      key: managementKey,
      headers: mergePatch,
      body: { application: { id: "😀".repeat(3000) } },
    });

    expect(res.status).toBe(400);
    expect(res.body).toHaveProperty(["errors", "application.id"]);
  });

  it("refuses a management application for the proxy", async () => {
    const { create, managementAppId } = await setup();

    const res = await create({ application: { id: managementAppId } });

    expect(res.status).toBe(400);
  });

  it("lists with id and wildcard name filters, replaces with PUT, merge-patches with PATCH (204, 415 otherwise)", async () => {
    const { api, create, managementKey } = await setup();
    const a = await create({ name: "Stripe payments" });
    const b = await create({ name: "Adyen payouts", configuration: { a: 1, b: 2 } });
    await create({ name: "Other" });

    const byName = await api.get<Page>("/proxies?name=*pay*", { key: managementKey });
    const byPrefix = await api.get<Page>("/proxies?name=stripe*", { key: managementKey });
    const byId = await api.get<Page>(`/proxies?id=${b.body.id}`, { key: managementKey });
    const put = await api.put<Proxy>(`/proxies/${a.body.id}`, {
      key: managementKey,
      body: { name: "Renamed", destination_url: "https://api.example.org", require_auth: false },
    });
    const patched = await api.patch(`/proxies/${b.body.id}`, {
      key: managementKey,
      headers: mergePatch,
      body: {
        configuration: { b: null, c: 3 },
        request_transform: { code: "module.exports = async (req) => req.args" },
      },
    });
    const wrongType = await api.patch(`/proxies/${b.body.id}`, { key: managementKey, body: { name: "x" } });
    const afterPatch = await api.get<Proxy>(`/proxies/${b.body.id}`, { key: managementKey });

    expect(byName.body.data.map((p) => p.name).sort()).toEqual(["Adyen payouts", "Stripe payments"]);
    expect(byPrefix.body.data.map((p) => p.name)).toEqual(["Stripe payments"]);
    expect(byId.body.data.map((p) => p.id)).toEqual([b.body.id]);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: "Renamed", require_auth: false, key: a.body.key });
    expect(patched.status).toBe(204);
    expect(wrongType.status).toBe(415);
    expect(afterPatch.body.configuration).toEqual({ a: 1, c: 3 });
    expect(afterPatch.body.request_transform?.code).toContain("module.exports");
    expect(afterPatch.body.name).toBe("Adyen payouts");
  });

  it("asks the sandbox to prepare the tenant's runner after a save with transform code, and only then", async () => {
    const prepared: string[] = [];
    const sandbox = svc.service.deps.sandbox;
    sandbox.prepare = async (tenantId) => {
      prepared.push(tenantId);
    };
    try {
      const { api, create, managementKey, tenantId } = await setup();
      const plain = await create({});
      const transform = { code: "module.exports = async (req) => req.args" };
      const withCode = await create({ response_transform: transform });
      const put = await api.put(`/proxies/${plain.body.id}`, {
        key: managementKey,
        body: { name: "x", destination_url: "https://api.example.com", request_transform: transform },
      });
      const invalid = await create({ request_transform: { code: "module.exports = (" } });

      expect([plain.status, withCode.status, put.status, invalid.status]).toEqual([201, 201, 200, 400]);
      expect(prepared).toEqual([tenantId, tenantId]);
    } finally {
      delete sandbox.prepare;
    }
  });

  it("deletes (404 after), refuses keys without the permission (403) and other tenants (404)", async () => {
    const { api, create, managementKey } = await setup();
    const other = await setup();
    const proxy = await create({});
    const reader = await appKey(api, managementKey, { type: "management", permissions: ["proxy:read"] });

    const forbidden = await Promise.all([
      api.post("/proxies", { key: reader, body: { name: "x", destination_url: "https://x.example.com" } }),
      api.delete(`/proxies/${proxy.body.id}`, { key: reader }),
      api.put(`/proxies/${proxy.body.id}`, {
        key: reader,
        body: { name: "x", destination_url: "https://x.example.com" },
      }),
    ]);
    const crossTenant = await Promise.all([
      api.get(`/proxies/${proxy.body.id}`, { key: other.managementKey }),
      api.delete(`/proxies/${proxy.body.id}`, { key: other.managementKey }),
      api.patch(`/proxies/${proxy.body.id}`, {
        key: other.managementKey,
        headers: mergePatch,
        body: { name: "x" },
      }),
    ]);
    const deleted = await api.delete(`/proxies/${proxy.body.id}`, { key: managementKey });
    const after = await api.get(`/proxies/${proxy.body.id}`, { key: managementKey });
    const logs = await api.get<{ data: { operation: string }[] }>(`/logs?entity_id=${proxy.body.id}`, {
      key: managementKey,
    });

    expect(forbidden.map((r) => r.status)).toEqual([403, 403, 403]);
    expect(crossTenant.map((r) => r.status)).toEqual([404, 404, 404]);
    expect(deleted.status).toBe(204);
    expect(after.status).toBe(404);
    expect(logs.body.data.map((l) => l.operation)).toEqual(["delete", "create"]);
  });
});
