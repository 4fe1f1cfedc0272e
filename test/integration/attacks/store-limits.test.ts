import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey } from "#test/support/tokens.ts";

// Attack class (found by `npm run fuzz`): a value the validation lets through but DynamoDB refuses (a map nested
// past its 32 levels, a number outside its range, an empty map key, an item over 400 KB, a key over its size)
// made the write fail inside the store: a 500 where the caller's mistake is a 400, and an error path that no
// test had walked. Every such value is refused at the edge with a 400 problem naming the field.
const svc = useService({ allowPrivateDestinations: true });

const nested = (levels: number): unknown => {
  let value: unknown = "x";
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

describe("values the store cannot keep", () => {
  it("are a 400 problem for masks, proxy and reactor configurations, and over-long ids", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const key = await appKey(api, managementKey, {
      type: "private",
      permissions: ["token:create", "token:read", "token:update"],
    });
    const token = await api.post<{ id: string }>("/tokens", { key, body: { type: "token", data: "x" } });
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: { name: "Noop", code: "module.exports = async () => ({ raw: {} });" },
    });
    const proxy = (configuration: unknown, extra: Record<string, unknown> = {}) =>
      api.post("/proxies", {
        key: managementKey,
        body: { name: "p", destination_url: "https://example.com/", configuration, ...extra },
      });
    const attempts: [string, () => Promise<{ status: number; headers: Headers; body: unknown }>][] = [
      [
        "mask nested 30 levels",
        () => api.post("/tokens", { key, body: { type: "token", data: "x", mask: nested(30) } }),
      ],
      [
        "mask holding 1e200",
        () => api.post("/tokens", { key, body: { type: "token", data: "x", mask: { n: 1e200 } } }),
      ],
      [
        "mask holding 2^60",
        () => api.post("/tokens", { key, body: { type: "token", data: "x", mask: [2 ** 60] } }),
      ],
      [
        "mask with an empty key",
        () => api.post("/tokens", { key, body: { type: "token", data: "x", mask: { "": "x" } } }),
      ],
      [
        "patched mask holding 1e-200",
        () =>
          api.patch(`/tokens/${token.body.id}`, {
            key,
            headers: { "content-type": "application/merge-patch+json" },
            body: { mask: { n: 1e-200 } },
          }),
      ],
      ["proxy configuration nested 30 levels", () => proxy({ c: nested(30) })],
      ["proxy configuration with an empty key", () => proxy({ "": "x" })],
      ["proxy configuration holding 1e130", () => proxy({ c: 1e130 })],
      ["proxy configuration of 200 KB", () => proxy({ c: "x".repeat(200 * 1024) })],
      [
        "proxy transforms of 2 × 200 KB",
        () => proxy({}, { request_transform: { code: "x".repeat(200 * 1024) } }),
      ],
      ["proxy application id of 100 KB", () => proxy({}, { application: { id: "a".repeat(100 * 1024) } })],
      [
        "reactor configuration of 200 KB",
        () =>
          api.post("/reactors", {
            key: managementKey,
            body: {
              name: "r",
              formula: { id: formula.body.id },
              configuration: { c: "x".repeat(200 * 1024) },
            },
          }),
      ],
      [
        "a 3,000-character application id in a path",
        () => api.delete(`/applications/${"x".repeat(3000)}/keys/k`, { key: managementKey }),
      ],
      [
        "a token id of 400 characters in 1,200 bytes",
        () => api.post("/tokens", { key, body: { type: "token", data: "x", id: "€".repeat(400) } }),
      ],
      [
        "a 1,200-byte token id in a path",
        () => api.get(`/tokens/${encodeURIComponent("€".repeat(400))}`, { key }),
      ],
    ];

    const answers: { what: string; status: number; problem: boolean }[] = [];
    for (const [what, attempt] of attempts) {
      const res = await attempt();
      answers.push({
        what,
        status: res.status,
        problem: /problem\+json/.test(res.headers.get("content-type") ?? ""),
      });
    }

    expect(answers).toEqual(attempts.map(([what]) => ({ what, status: 400, problem: true })));
  });
});
