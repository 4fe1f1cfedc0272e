import { describe, expect, it } from "vitest";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { accessOf, requireReveal, weaker } from "#shared/domain/tokens/access.ts";
import { variablesRead } from "#shared/domain/tokens/expressions.ts";

describe("variablesRead (what a fingerprint expression depends on)", () => {
  it.each([
    ["{{ data | stringify }}", true],
    ["{{ data.number | last4 }}", true],
    ["{{ 'x' | append: data.y }}", true],
    ["{% for d in data %}{{ d }}{% endfor %}", true],
    ["constant", false],
    ["{{ 'literal' }}", false],
    ["{% assign data = 'x' %}{{ data }}", false],
    ["{% capture data %}x{% endcapture %}{{ data }}", false],
    ["{{ datum }}", false],
  ])("%s reads data: %s", (template, reads) => {
    expect(variablesRead(template).includes("data")).toBe(reads);
    // Asked again (answered from the cache), the same.
    expect(variablesRead(template).includes("data")).toBe(reads);
  });
});

describe("weaker", () => {
  it("keeps the transform that shows less, in either order", () => {
    expect(weaker("reveal", "mask")).toBe("mask");
    expect(weaker("mask", "reveal")).toBe("mask");
    expect(weaker("redact", "reveal")).toBe("redact");
    expect(weaker("reveal", "reveal")).toBe("reveal");
  });
});

describe("requireReveal", () => {
  const principal = (rules: unknown[], permissions: string[] = []) =>
    ({
      kind: "application",
      tenantId: "t1",
      application: { id: "app", permissions, rules },
    }) as unknown as TenantPrincipal;
  const token = { id: "tok", container: "/pci/high/" };

  it("passes reveal-level access only", () => {
    const revealing = accessOf(
      principal([{ priority: 1, container: "/pci/", transform: "reveal", permissions: ["token:update"] }]),
    );
    const masking = accessOf(
      principal([{ priority: 1, container: "/pci/", transform: "mask", permissions: ["token:update"] }]),
    );
    const plain = accessOf(principal([], ["token:update"]));

    expect(() => requireReveal(revealing, token, "token:update", "mask")).not.toThrow();
    expect(() => requireReveal(masking, token, "token:update", "mask")).toThrow(
      expect.objectContaining({ kind: "forbidden" }),
    );
    // Without rules token:update is an implicit mask: not enough to change what is evaluated on data.
    expect(() => requireReveal(plain, token, "token:update", "mask")).toThrow(
      expect.objectContaining({ kind: "forbidden" }),
    );
  });
});
