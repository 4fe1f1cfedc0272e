import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AccessRule,
  evaluateAccess,
  mayEverHold,
  normalizeContainer,
  ruleSetErrors,
} from "#shared/domain/access-rules.ts";

const token = (container: string, id = "tok-1") => ({ id, container });
const rule = (overrides: Partial<AccessRule>): AccessRule => ({
  priority: 1,
  container: "/",
  transform: "mask",
  permissions: ["token:read"],
  ...overrides,
});

describe("evaluateAccess", () => {
  it("uses the lowest-priority matching rule that grants the permission", () => {
    const grant = {
      permissions: [],
      rules: [
        rule({ priority: 5, container: "/pci/", transform: "reveal" }),
        rule({ priority: 2, container: "/pci/high/", transform: "redact" }),
        rule({ priority: 1, container: "/pci/high/", transform: "mask", permissions: ["token:use"] }),
      ],
    };

    expect(evaluateAccess(grant, token("/pci/high/"), "token:read")).toBe("redact");
    expect(evaluateAccess(grant, token("/pci/low/"), "token:read")).toBe("reveal");
    expect(evaluateAccess(grant, token("/pci/high/"), "token:use")).toBe("mask");
    expect(evaluateAccess(grant, token("/bank/"), "token:read")).toBeUndefined();
  });

  it("matches containers by prefix, not by substring", () => {
    const grant = { permissions: [], rules: [rule({ container: "/pci/" })] };

    expect(evaluateAccess(grant, token("/pci/"), "token:read")).toBe("mask");
    expect(evaluateAccess(grant, token("/pci/high/deep/"), "token:read")).toBe("mask");
    expect(evaluateAccess(grant, token("/general/pci/"), "token:read")).toBeUndefined();
  });

  it("ignores plain permissions when the caller has rules", () => {
    const grant = { permissions: ["token:read" as const], rules: [rule({ container: "/pci/" })] };

    expect(evaluateAccess(grant, token("/bank/"), "token:read")).toBeUndefined();
  });

  it("gives plain permissions an implicit mask, and reveal for token:use, on every container", () => {
    const grant = { permissions: ["token:read" as const, "token:use" as const], rules: [] };

    expect(evaluateAccess(grant, token("/any/where/"), "token:read")).toBe("mask");
    expect(evaluateAccess(grant, token("/any/where/"), "token:use")).toBe("reveal");
    expect(evaluateAccess(grant, token("/any/"), "token:delete")).toBeUndefined();
  });

  it("applies session conditions on id and container", () => {
    const grant = {
      permissions: [],
      rules: [
        rule({
          container: undefined,
          conditions: [
            { attribute: "id", operator: "equals", value: "tok-7" },
            { attribute: "container", operator: "starts_with", value: "/pci/" },
          ],
          transform: "reveal",
        }),
      ],
    };

    expect(evaluateAccess(grant, token("/pci/high/", "tok-7"), "token:read")).toBe("reveal");
    expect(evaluateAccess(grant, token("/pci/high/", "tok-8"), "token:read")).toBeUndefined();
    expect(evaluateAccess(grant, token("/bank/", "tok-7"), "token:read")).toBeUndefined();
  });

  it("never grants through a rule that lacks the permission, whatever the priorities (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ priority: fc.integer({ min: 1, max: 50 }), reads: fc.boolean() }), {
          maxLength: 8,
        }),
        (specs) => {
          const rules = specs.map((s) =>
            rule({ priority: s.priority, permissions: s.reads ? ["token:read"] : ["token:create"] }),
          );
          const result = evaluateAccess({ permissions: [], rules }, token("/x/"), "token:read");
          expect(result !== undefined).toBe(specs.some((s) => s.reads));
        },
      ),
    );
  });
});

describe("mayEverHold", () => {
  it("counts token permissions granted by any rule", () => {
    expect(mayEverHold({ permissions: [], rules: [rule({})] }, "token:read")).toBe(true);
    expect(mayEverHold({ permissions: [], rules: [rule({})] }, "token:delete")).toBe(false);
    expect(mayEverHold({ permissions: ["log:read"], rules: [] }, "log:read")).toBe(true);
  });
});

describe("normalizeContainer", () => {
  it("lowercases and checks the path shape", () => {
    expect(normalizeContainer("/PCI/High/")).toBe("/pci/high/");
    expect(normalizeContainer("/")).toBe("/");
    expect(normalizeContainer("pci/")).toBeUndefined();
    expect(normalizeContainer("/pci")).toBeUndefined();
    expect(normalizeContainer("/p c i/")).toBeUndefined();
    expect(normalizeContainer("//")).toBeUndefined();
  });

  it("accepts every path built from valid segments (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z0-9_-]{1,10}$/), { maxLength: 5 }), (segments) => {
        const path = `/${segments.map((s) => `${s}/`).join("")}`;
        expect(normalizeContainer(path.toUpperCase())).toBe(path);
      }),
    );
  });
});

describe("ruleSetErrors", () => {
  it("accepts a valid application rule set", () => {
    expect(
      ruleSetErrors([rule({}), rule({ priority: 2 })], { type: "private", allowConditions: false }),
    ).toEqual({});
  });

  it("reports duplicates, missing containers, conditions on applications and type-forbidden permissions", () => {
    const errors = ruleSetErrors(
      [
        rule({}),
        rule({ container: undefined }),
        rule({ priority: 3, conditions: [{ attribute: "id", operator: "equals", value: "x" }] }),
        rule({ priority: 4, permissions: ["token:read"] }),
      ],
      { type: "public", allowConditions: false },
    );

    expect(errors["rules.1.priority"]).toBeDefined();
    expect(errors["rules.1"]).toBeDefined();
    expect(errors["rules.2.conditions"]).toBeDefined();
    expect(errors["rules.3.permissions"]).toEqual(["A public application cannot hold token:read."]);
  });

  it("refuses any rule on a management application", () => {
    expect(ruleSetErrors([rule({})], { type: "management", allowConditions: false })).toHaveProperty("rules");
  });

  it("allows conditions instead of a container for sessions", () => {
    const sessionRule = rule({
      container: undefined,
      conditions: [{ attribute: "container", operator: "starts_with", value: "/pci/" }],
    });
    expect(ruleSetErrors([sessionRule], { type: "private", allowConditions: true })).toEqual({});
  });
});
