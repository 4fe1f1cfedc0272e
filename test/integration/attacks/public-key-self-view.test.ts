/**
 * Probe (review s54c): what a public key (shipped in every visitor's browser) learns of its own application
 * through GET /applications/key. It needs no permission.
 */
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

describe("a public key's view of its own application", () => {
  it("names no member or management application of the tenant", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "s54c public self view");
    const browser = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: {
        name: "browser",
        type: "public",
        permissions: ["token:create"],
        allowed_origins: ["https://shop.example"],
      },
    });
    expect(browser.status).toBe(201);
    const self = await api.get<Record<string, unknown>>("/applications/key", {
      key: browser.body.key,
      headers: { origin: "https://shop.example" },
    });
    expect(self.status).toBe(200);
    expect(self.body).not.toHaveProperty("minted_by");
    expect(self.body).not.toHaveProperty("created_by");
    expect(self.body).not.toHaveProperty("keys");
  });
});
