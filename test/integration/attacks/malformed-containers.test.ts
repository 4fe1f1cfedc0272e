import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody } from "#test/support/tokens.ts";

// Attack class: a container that is not one (`""`, no slashes, `//`) slips past validation: `[""]` silently
// files the token under the type's default container, and a condition `starts_with "/pc"` matches `/pci/` as
// well as `/pcx/`. Every route that takes a container answers 400 for a malformed one.
const svc = useService();
const MALFORMED = ["", " ", "pci", "/pci", "pci/", "//", "/pci//x/", "/PCI /", "/p.ci/", "/../"];

describe("malformed containers", () => {
  it("are a 400 problem on token create and patch, application rules and session conditions", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const key = await appKey(api, tenant.managementKey, {
      type: "private",
      permissions: ["token:create", "token:read", "token:update"],
    });
    const token = await api.post<TokenBody>("/tokens", { key, body: { type: "token", data: "x" } });
    const session = await api.post<{ nonce: string }>("/sessions", { key });

    const results: { what: string; status: number; type: string | null }[] = [];
    const record = (what: string, res: { status: number; headers: Headers }) =>
      results.push({ what, status: res.status, type: res.headers.get("content-type") });
    for (const container of MALFORMED) {
      record(
        `create ${JSON.stringify(container)}`,
        await api.post("/tokens", { key, body: { type: "token", data: "x", containers: [container] } }),
      );
      record(
        `patch ${JSON.stringify(container)}`,
        await api.patch(`/tokens/${token.body.id}`, {
          key,
          headers: { "content-type": "application/merge-patch+json" },
          body: { containers: [container] },
        }),
      );
      record(
        `application rule ${JSON.stringify(container)}`,
        await api.post("/applications", {
          key: tenant.managementKey,
          body: {
            name: "rules",
            type: "private",
            rules: [{ priority: 1, container, transform: "mask", permissions: ["token:read"] }],
          },
        }),
      );
      record(
        `session condition ${JSON.stringify(container)}`,
        await api.post("/sessions/authorize", {
          key: tenant.managementKey,
          body: {
            nonce: session.body.nonce,
            rules: [
              {
                priority: 1,
                conditions: [{ attribute: "container", operator: "starts_with", value: container }],
                transform: "mask",
                permissions: ["token:read"],
              },
            ],
          },
        }),
      );
    }
    const wellFormed = await api.post<TokenBody>("/tokens", {
      key,
      body: { type: "token", data: "x", containers: [" /PCI/Cards/ "] },
    });
    const read = await api.get<TokenBody>(`/tokens/${token.body.id}`, { key });

    expect(results.filter((r) => r.status !== 400 || !r.type?.includes("problem+json"))).toEqual([]);
    expect(wellFormed.status, JSON.stringify(wellFormed.body)).toBe(201);
    expect(wellFormed.body.containers).toEqual(["/pci/cards/"]);
    expect(read.body.containers).toEqual(token.body.containers);
  });
});
