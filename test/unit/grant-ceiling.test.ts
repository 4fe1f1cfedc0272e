import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AccessRule, evaluateAccess } from "#shared/domain/access-rules.ts";
import type { Application, TenantPrincipal } from "#shared/domain/entities.ts";
import { assertActsForMember, assertMayActAs, widerThan } from "#shared/domain/grant-ceiling.ts";
import type { Permission } from "#shared/domain/permissions.ts";

const rule = (overrides: Partial<AccessRule>): AccessRule => ({
  priority: 1,
  container: "/",
  transform: "mask",
  permissions: ["token:read"],
  ...overrides,
});
const grant = (permissions: Permission[], rules: AccessRule[] = []) => ({ permissions, rules });

describe("widerThan (a key grants no more than it holds)", () => {
  it("refuses permissions the ceiling does not hold and accepts a subset", () => {
    const ceiling = grant(["application:create", "application:read"]);

    expect(widerThan(ceiling, grant(["application:read"]))).toEqual([]);
    expect(widerThan(ceiling, grant(["application:delete"]))).toHaveLength(1);
    expect(widerThan(ceiling, grant(["token:read"])).length).toBeGreaterThan(0);
  });

  it("compares transforms container by container: a stronger transform or a wider container is wider", () => {
    const ceiling = grant([], [rule({ container: "/pci/", transform: "mask" })]);

    expect(widerThan(ceiling, grant([], [rule({ container: "/pci/eu/", transform: "redact" })]))).toEqual([]);
    expect(widerThan(ceiling, grant([], [rule({ container: "/pci/", transform: "reveal" })]))).toHaveLength(
      1,
    );
    expect(widerThan(ceiling, grant([], [rule({ container: "/", transform: "redact" })]))).toHaveLength(1);
    expect(widerThan(ceiling, grant(["token:read"]))).toHaveLength(1);
  });

  it("sees through rule order: a low-priority exception that the ceiling redacts is wider", () => {
    const ceiling = grant(
      [],
      [
        rule({ priority: 1, container: "/pci/secret/", transform: "redact" }),
        rule({ priority: 2, container: "/pci/", transform: "reveal" }),
      ],
    );

    expect(widerThan(ceiling, grant([], [rule({ container: "/pci/", transform: "mask" })]))).toHaveLength(1);
    expect(
      widerThan(
        ceiling,
        grant(
          [],
          [
            rule({ priority: 1, container: "/pci/secret/", transform: "redact" }),
            rule({ priority: 2, container: "/pci/", transform: "mask" }),
          ],
        ),
      ),
    ).toEqual([]);
  });

  it("agrees with rule evaluation on arbitrary containers (no accepted grant is stronger anywhere)", () => {
    const containers = ["/", "/a/", "/a/b/", "/b/", "/a/b/c/"];
    const transforms = ["redact", "mask", "reveal"] as const;
    const ruleArb = fc.record({
      container: fc.constantFrom(...containers),
      transform: fc.constantFrom(...transforms),
      permissions: fc.subarray(["token:read", "token:use"] as const, { minLength: 1 }),
    });
    const rulesArb = fc
      .array(ruleArb, { maxLength: 4 })
      .map((rs) => rs.map((r, i) => ({ ...r, priority: i + 1, permissions: [...r.permissions] })));
    const rank = (t: string | undefined) =>
      t ? transforms.indexOf(t as (typeof transforms)[number]) + 1 : 0;

    fc.assert(
      fc.property(rulesArb, rulesArb, fc.constantFrom(...containers, "/a/x/", "/c/"), (held, wanted, at) => {
        fc.pre(widerThan(grant([], held), grant([], wanted)).length === 0);
        for (const p of ["token:read", "token:use"] as const) {
          const token = { id: "t", container: at };
          expect(rank(evaluateAccess(grant([], wanted), token, p))).toBeLessThanOrEqual(
            rank(evaluateAccess(grant([], held), token, p)),
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});

const application = (fields: Partial<Application>): Application => ({
  id: "a",
  tenant_id: "t",
  name: "app",
  type: "management",
  permissions: [],
  rules: [],
  created_at: "2026-01-01T00:00:00Z",
  ...fields,
});
const principalOf = (fields: Partial<Application>): TenantPrincipal => ({
  kind: "application",
  tenantId: "t",
  keyId: "k",
  application: application(fields),
});

describe("acting as an application (proxies, reactors) and inviting members", () => {
  const vault = application({ type: "private", rules: [rule({ transform: "reveal" })] });
  const narrow = principalOf({ permissions: ["proxy:create", "proxy:update", "tenant:invitation:create"] });
  const member = principalOf({ permissions: ["proxy:create"], member_id: "m" });

  it("lets only a caller whose ceiling covers the application act as it, with a 403 naming no access", () => {
    expect(() => assertMayActAs(member, vault, "bind a proxy to")).not.toThrow();
    expect(() => assertMayActAs(narrow, application({ type: "private" }), "bind a proxy to")).not.toThrow();
    const refused = (() => {
      try {
        assertMayActAs(narrow, vault, "bind a proxy to");
      } catch (error) {
        return error as { kind: string; detail: string; errors?: unknown };
      }
    })();
    expect(refused?.kind).toBe("forbidden");
    expect(refused?.detail).not.toContain("token:read");
    expect(refused?.errors).toBeUndefined();
  });

  it("lets only a member's own key invite, whatever permissions another key holds", () => {
    expect(() => assertActsForMember(member, "invite members")).not.toThrow();
    expect(() => assertActsForMember(narrow, "invite members")).toThrow(
      expect.objectContaining({ kind: "forbidden" }),
    );
  });
});
