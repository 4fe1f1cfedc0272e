import { describe, expect, it } from "vitest";
import { reactingTenant } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";

/**
 * Token data a reactor's tokenize block returns is held to the depth a request body is (64 levels): stored 1,000
 * deep, with a mask of paths as long, every masked read of it walked them (review s54).
 */
const svc = useService();

describe("data nested deeper than a body may nest, from a reactor's tokenize block", () => {
  it("is refused, and data as deep as a body may nest is stored", async () => {
    const { api, managementKey, acting, caller } = await reactingTenant(svc, [
      "token:use",
      "token:read",
      "token:create",
    ]);
    const reactorOf = async (depth: number) => {
      const code = `module.exports = async () => {
        let data = "x"; for (let i = 0; i < ${depth}; i++) data = { a: data };
        return { tokenize: { deep: { type: "token", data } } };
      };`;
      const reactor = await api.post<{ id: string }>("/reactors", {
        key: managementKey,
        body: { name: `deep ${depth}`, code, application: { id: acting.id } },
      });
      expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
      return api.post<{ tokens?: { deep?: { id: string } }; detail?: string; errors?: unknown }>(
        `/reactors/${reactor.body.id}/react`,
        { key: caller, body: { args: {} } },
      );
    };
    const deep = await reactorOf(65);
    expect(deep.status, JSON.stringify(deep.body)).toBe(400);
    expect(JSON.stringify(deep.body)).toContain("must not nest objects and arrays deeper than 64 levels");
    const allowed = await reactorOf(63);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(allowed.body.tokens?.deep?.id).toEqual(expect.any(String));
  });
});
