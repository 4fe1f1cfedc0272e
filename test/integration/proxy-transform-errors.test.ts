import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });

let destination = "";
let server: http.Server;
beforeAll(async () => {
  server = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end("{}"),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  destination = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("a proxy transform's error", () => {
  it("stays generic to callers, and shows its message to a member of the tenant calling with their own key", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const app = await api.post<{ id: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "proxy app", type: "private", permissions: ["token:use"] },
    });
    const proxy = await api.post<{ key: string }>("/proxies", {
      key: tenant.managementKey,
      body: {
        name: "throws",
        destination_url: destination,
        require_auth: false,
        application: { id: app.body.id },
        request_transform: {
          code: `module.exports = async (req) => { throw new TypeError("no field 'amount' in " + JSON.stringify(req.args.body)); };`,
        },
      },
    });
    const narrow = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:use"] });
    const call = (key?: string) =>
      api.post<{ proxy_error: Record<string, unknown> }>("/proxy", {
        headers: { "svc-proxy-key": proxy.body.key },
        ...(key ? { key } : {}),
        body: { card: "4242424242424242" },
      });

    const anonymous = await call();
    const application = await call(narrow);
    const member = await call(tenant.managementKey);

    for (const res of [anonymous, application]) {
      expect(res.status).toBe(500);
      expect(res.body.proxy_error).toMatchObject({ title: "Transform Failed" });
      expect(JSON.stringify(res.body)).not.toContain("4242424242424242");
      expect(res.body.proxy_error).not.toHaveProperty("errors");
    }
    expect(member.status).toBe(500);
    expect(member.body.proxy_error).toMatchObject({
      errors: { error: [`no field 'amount' in {"card":"4242424242424242"}`] },
      detail: expect.stringContaining("TypeError: no field 'amount'"),
    });
  });
});
