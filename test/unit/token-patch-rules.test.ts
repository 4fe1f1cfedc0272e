import { describe, expect, it } from "vitest";
import { revealChanges, shortens } from "#shared/domain/tokens/manage.ts";

describe("revealChanges (what a PATCH changes that takes reveal-level token:update)", () => {
  it("names the evaluated fields given, set or cleared", () => {
    expect(revealChanges({ mask: null, search_indexes: ["{{ data }}"] }, false)).toEqual([
      "mask",
      "search_indexes",
    ]);
    expect(revealChanges({ fingerprint_expression: "{{ data }}" }, false)).toEqual([
      "fingerprint_expression",
    ]);
  });

  it("names containers only when the token actually moves", () => {
    expect(revealChanges({ containers: ["/pci/high/"] }, false)).toEqual([]);
    expect(revealChanges({ containers: ["/general/"] }, true)).toEqual(["containers"]);
    expect(revealChanges({ containers: ["/general/"], mask: "x" }, true)).toEqual(["mask", "containers"]);
  });

  it("leaves data, metadata, deduplication and expiry to token:update alone", () => {
    expect(
      revealChanges({ data: "x", metadata: { a: "b" }, deduplicate_token: true, expires_at: null }, false),
    ).toEqual([]);
  });
});

describe("shortens (an expiry that takes token:delete)", () => {
  const at = "2030-01-01T00:00:00.000Z";

  it("is true for a first expiry and for an earlier one", () => {
    expect(shortens(undefined, at)).toBe(true);
    expect(shortens(at, "2029-12-31T23:59:59.999Z")).toBe(true);
  });

  it("is false for the same or a later expiry", () => {
    expect(shortens(at, at)).toBe(false);
    expect(shortens(at, "2030-01-01T00:00:00.001Z")).toBe(false);
  });
});
