import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AccessGrant, AccessRule } from "#shared/domain/access-rules.ts";
import { TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { accessOfGrants } from "#shared/domain/tokens/access.ts";
import { isVisible } from "#shared/domain/tokens/visibility.ts";

/**
 * The one rule of lists and counts: what `visibility` selects (the clauses a store filters and counts on) is
 * exactly what `evaluate` lets the caller read, for a key's grant and for a session's (its own and its
 * application's), whatever the rules, priorities and conditions.
 */
const containers = ["/", "/pci/", "/pci/high/", "/pci/low/", "/general/", "/general/high/", "/pii/high/"];
const ids = ["a", "ab", "abc", "b", "ba"];

const container = fc.constantFrom(...containers);
const id = fc.constantFrom(...ids);
const permissions = fc.subarray([...TOKEN_PERMISSIONS], { minLength: 1 });
const condition = fc.oneof(
  fc.record({
    attribute: fc.constant("container" as const),
    operator: fc.constantFrom("equals" as const, "starts_with" as const),
    value: container,
  }),
  fc.record({
    attribute: fc.constant("id" as const),
    operator: fc.constantFrom("equals" as const, "starts_with" as const),
    value: id,
  }),
);
const rule = fc.record({
  container: fc.option(container, { nil: undefined }),
  conditions: fc.option(fc.array(condition, { minLength: 1, maxLength: 3 }), { nil: undefined }),
  transform: fc.constantFrom("redact" as const, "mask" as const, "reveal" as const),
  permissions,
});
const grant: fc.Arbitrary<AccessGrant> = fc.oneof(
  // Plain permissions, no rules.
  permissions.map((p) => ({ permissions: p, rules: [] })),
  fc.array(rule, { maxLength: 5 }).map((rules) => ({
    permissions: [],
    rules: rules.map((r, priority): AccessRule => ({ ...r, priority })),
  })),
);
const token = fc.record({ id, container: container.filter((c) => c !== "/") });

describe("token visibility (lists and counts)", () => {
  it("selects exactly the tokens evaluate grants, and as revealed only tokens it reveals, for keys and sessions", () => {
    fc.assert(
      fc.property(
        grant,
        fc.option(grant, { nil: undefined }),
        fc.constantFrom(...TOKEN_PERMISSIONS),
        container,
        fc.array(token, { minLength: 1, maxLength: 8 }),
        (application, session, permission, scope, tokens) => {
          const access = accessOfGrants(session ? { application, session } : { application });
          const visibility = access.visibility(permission);
          const revealed = access.revealVisibility(permission, scope);
          for (const t of tokens) {
            expect(isVisible(visibility, t)).toBe(access.evaluate(t, permission) !== undefined);
            // Reveal visibility may miss some (a carved-out region is no clause), never add one, within its scope.
            if (isVisible(revealed, t)) {
              expect(t.container.startsWith(scope)).toBe(true);
              expect(access.evaluate(t, permission)).toBe("reveal");
            }
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("a session's visibility holds both grants' clauses, an unauthorized session none", () => {
    const pci: AccessGrant = {
      permissions: [],
      rules: [{ priority: 1, container: "/pci/", transform: "mask", permissions: ["token:read"] }],
    };
    const everything: AccessGrant = {
      permissions: [],
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    };
    expect(accessOfGrants({ application: pci, session: everything }).visibility("token:read")).toEqual([
      [{ containerPrefix: "/pci/" }],
    ]);
    expect(
      accessOfGrants({ application: pci, session: { permissions: [], rules: [] } }).visibility("token:read"),
    ).toEqual([]);
    // A session narrower than its application filters on its own clauses alone (the wider set adds nothing).
    const pciHigh: AccessGrant = {
      permissions: [],
      rules: [{ priority: 1, container: "/pci/high/", transform: "reveal", permissions: ["token:read"] }],
    };
    expect(accessOfGrants({ application: pci, session: pciHigh }).visibility("token:read")).toEqual([
      [{ containerPrefix: "/pci/high/" }],
    ]);
    expect(accessOfGrants({ application: pci, session: pci }).visibility("token:read")).toEqual([
      [{ containerPrefix: "/pci/" }],
    ]);
  });

  it("reveal visibility is a rule's region unless a rule before it decides otherwise there", () => {
    const rule = (priority: number, container: string, transform: "mask" | "reveal") => ({
      priority,
      container,
      transform,
      permissions: ["token:read" as const],
    });
    const of = (rules: AccessRule[], scope?: string) =>
      accessOfGrants({ application: { permissions: [], rules } }).revealVisibility("token:read", scope);
    // Revealed in /open/, masked in /masked/: /open/.
    expect(of([rule(1, "/open/", "reveal"), rule(2, "/masked/", "mask")])).toEqual([
      [{ containerPrefix: "/open/" }],
    ]);
    // Masked everywhere after /mine/: still /mine/ (the mask comes later).
    expect(of([rule(1, "/mine/", "reveal"), rule(2, "/", "mask")])).toEqual([
      [{ containerPrefix: "/mine/" }],
    ]);
    // /pii/ masked first, then / revealed: "/ but not /pii/" is no clause, so nothing, unless the scope leaves /pii/ out.
    const carved = [rule(1, "/pii/", "mask"), rule(2, "/", "reveal")];
    expect(of(carved)).toEqual([[]]);
    expect(of(carved, "/general/")).toEqual([[{ containerPrefix: "/general/" }]]);
    // Without rules, token:read is masked: nothing revealed.
    expect(
      accessOfGrants({ application: { permissions: ["token:read"], rules: [] } }).revealVisibility(
        "token:read",
      ),
    ).toEqual([[]]);
  });
});
