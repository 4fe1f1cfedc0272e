import { describe, expect, it } from "vitest";
import { TokenTypes } from "#shared/domain/proxies/token-types.ts";

describe("the token types a proxy process remembers", () => {
  it("knows a request's types only when it knows every token's, per tenant", () => {
    const types = new TokenTypes();
    types.remember("t1", [
      { id: "a", type: "card" },
      { id: "b", type: "bank" },
    ]);

    expect(types.typesOf("t1", ["b", "a"])).toEqual(["bank", "card"]);
    expect(types.typesOf("t1", [])).toEqual([]);
    expect(types.typesOf("t1", ["a", "c"])).toBeUndefined();
    expect(types.typesOf("t2", ["a"])).toBeUndefined();
  });

  it("forgets the least recently remembered beyond its limit", () => {
    const types = new TokenTypes(2);
    types.remember("t", [{ id: "a", type: "card" }]);
    types.remember("t", [{ id: "b", type: "card" }]);
    types.remember("t", [{ id: "a", type: "card" }]);
    types.remember("t", [{ id: "c", type: "card" }]);

    expect(types.typesOf("t", ["a", "c"])).toEqual(["card", "card"]);
    expect(types.typesOf("t", ["b"])).toBeUndefined();
  });
});
