import { describe, expect, it } from "vitest";
import { parseSearchQuery } from "#shared/domain/tokens/search-query.ts";

describe("parseSearchQuery", () => {
  it("reads one term, and one ANDed container:", () => {
    expect(parseSearchQuery("data:4242")).toEqual({ term: { kind: "data", value: "4242" } });
    expect(parseSearchQuery(" type:card ")).toEqual({ term: { kind: "type", value: "card" } });
    expect(parseSearchQuery("metadata.customer:c-1 AND container:/pci/")).toEqual({
      term: { kind: "metadata", key: "customer", value: "c-1" },
      container: "/pci/",
    });
    expect(parseSearchQuery("container:/pci/ AND fingerprint:abc")).toEqual({
      term: { kind: "fingerprint", value: "abc" },
      container: "/pci/",
    });
    expect(parseSearchQuery('data:"a AND b \\" c"')).toEqual({
      term: { kind: "data", value: 'a AND b " c' },
    });
    expect(parseSearchQuery("data:a:b")).toEqual({ term: { kind: "data", value: "a:b" } });
  });

  it("refuses anything else, never echoing the value", () => {
    for (const query of [
      "",
      "4242",
      "ssn:1",
      "data:",
      "data:1 2",
      "data:1 OR data:2",
      "data:1 AND type:card",
      "container:/a/ AND container:/b/",
      "data:1 AND container:/a/ AND container:/a/",
      'data:"unterminated',
      "metadata.:x",
      "metadata.constructor:x",
    ]) {
      let message = "";
      try {
        parseSearchQuery(query);
      } catch (error) {
        message = error instanceof Error ? error.message : String(error);
      }
      expect(message, query).toMatch(/search query is invalid/);
      if (query.includes("4242")) expect(message).not.toContain("4242");
    }
  });
});
