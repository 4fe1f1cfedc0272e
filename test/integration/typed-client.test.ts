import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { client } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { VISA } from "#test/support/tokens.ts";
import { createVaultClient } from "../../clients/typescript/index.ts";
import { CLIENT_TYPES_PATH, clientTypes } from "../../scripts/openapi-types.ts";

const svc = useService({ allowPrivateDestinations: true });

const received: { url: string; body: string }[] = [];
const destination = useLocalServer((req, res, body) => {
  received.push({ url: String(req.url), body: body.toString("utf8") });
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ ok: true }));
});

describe("the typed client (clients/typescript)", () => {
  it("has types generated from the served document (npm run client:types rewrites them)", async () => {
    const doc = await client(svc.url).get("/openapi.json");

    const committed = readFileSync(CLIENT_TYPES_PATH, "utf8");
    expect(
      await clientTypes(doc.body),
      "clients/typescript/schema.d.ts is stale: run npm run client:types",
    ).toBe(committed);
  });

  it("creates a tenant, an application, a token, reads it back, lists it by metadata and calls a proxy", async () => {
    const root = createVaultClient({ baseUrl: svc.url, apiKey: svc.rootKey });
    const tenant = await root.POST("/tenants", { body: { name: "Typed" } });
    expect(tenant.response.status, JSON.stringify(tenant.error)).toBe(201);
    const management = createVaultClient({ baseUrl: svc.url, apiKey: tenant.data?.management_key as string });

    const app = await management.POST("/applications", {
      body: { name: "backend", type: "private", permissions: ["token:create", "token:read", "token:use"] },
      params: { header: { "SVC-IDEMPOTENCY-KEY": "typed-client-app" } },
    });
    expect(app.response.status, JSON.stringify(app.error)).toBe(201);
    const backend = createVaultClient({ baseUrl: svc.url, apiKey: app.data?.key as string });

    const created = await backend.POST("/tokens", {
      body: { type: "card_number", data: VISA, metadata: { brand: "visa" } },
    });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const id = created.data?.id as string;
    const read = await backend.GET("/tokens/{id}", { params: { path: { id } } });
    // Read back masked (no access rule reveals it); the proxy below detokenizes it in full.
    expect(read.data).toMatchObject({ id, type: "card_number", data: "XXXXXXXXXXXX4242" });
    const listed = await backend.GET("/tokens", {
      params: { query: { metadata: { "metadata.brand": "VISA" } } },
    });
    expect(listed.data?.data.map((token) => token.id)).toEqual([id]);
    const none = await backend.GET("/tokens", {
      params: { query: { metadata: { "metadata.brand": "amex" } } },
    });
    expect(none.data?.data).toEqual([]);

    const proxy = await management.POST("/proxies", {
      body: {
        name: "typed",
        destination_url: `${destination.url}/base`,
        require_auth: false,
        application: { id: app.data?.id as string },
      },
    });
    expect(proxy.response.status, JSON.stringify(proxy.error)).toBe(201);
    const anyone = createVaultClient({ baseUrl: svc.url });
    const invoked = await anyone.POST("/proxy/{proxy}", {
      params: { path: { proxy: "charges" } },
      headers: { "SVC-PROXY-KEY": proxy.data?.key as string },
      body: { card: `{{ token: ${id} }}` },
    });

    expect(invoked.response.status).toBe(200);
    expect(received.at(-1)?.url).toBe("/base/charges");
    expect(JSON.parse(received.at(-1)?.body ?? "{}")).toEqual({ card: VISA });
  });
});
