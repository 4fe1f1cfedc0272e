import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { openProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";

// Attack class: a body nested thousands of levels deep makes the recursive walkers behind the edge (zod,
// size checks, expressions, sealing) overflow the stack: a 500 instead of a validation problem.
const svc = useService();
const MAX_JSON_DEPTH = 64;

/** `{"data": {"a": {"a": ... "x" ...}}}` with `levels` objects inside the body. */
const nestedData = (levels: number) =>
  `{"type":"token","data":${'{"a":'.repeat(levels)}"x"${"}".repeat(levels)}}`;
const nestedArrays = (levels: number) => `{"args":${"[".repeat(levels)}${"]".repeat(levels)}}`;

describe("deeply nested JSON bodies", () => {
  it("answers 400 problem+json for data nested 5,000 levels, and at the documented limit of 64", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const key = await appKey(api, tenant.managementKey, {
      type: "private",
      // token:use too: a body is validated once the key may call the route (401 and 403 come first).
      permissions: ["token:create", "token:read", "token:update", "token:use"],
    });
    const post = (rawBody: string, path = "/tokens") =>
      api.call("POST", path, { key, headers: { "content-type": "application/json" }, rawBody });

    const deep = await post(nestedData(5_000));
    const overLimit = await post(nestedData(MAX_JSON_DEPTH)); // the body itself is level 1
    const atLimit = await post(nestedData(MAX_JSON_DEPTH - 2));
    const token = atLimit.body as { id: string };
    const patch = await api.call("PATCH", `/tokens/${token.id}`, {
      key,
      headers: { "content-type": "application/merge-patch+json" },
      rawBody: `{"data":${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}}`,
    });
    const arrays = await post(nestedArrays(100_000), "/reactors/anything/react");
    const health = await api.get("/healthz");

    for (const res of [deep, overLimit, patch, arrays]) {
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(JSON.stringify(res.body)).toMatch(/deeper than 64/);
    }
    expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(201);
    expect(health.status).toBe(200);
  });

  it("answers a 400 proxy problem for a proxied JSON body nested 100,000 levels (it was walked recursively)", async () => {
    const api = client(svc.url);
    const proxyKey = await openProxy(svc.url, svc.rootKey, "https://api.example.com/v1");
    const res = await api.call<{ proxy_error?: { status: number; detail: string } }>("POST", "/proxy", {
      headers: { "svc-proxy-key": proxyKey, "content-type": "application/json" },
      rawBody: nestedArrays(100_000),
    });

    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(res.body.proxy_error?.detail).toMatch(/deeper than 64/);
  });
});
