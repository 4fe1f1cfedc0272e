import { describe, expect, it } from "vitest";
import { STORED_MAX_DEPTH, storableProblem } from "#shared/domain/storable.ts";

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

describe("storableProblem", () => {
  it("accepts what DynamoDB keeps", () => {
    expect(
      storableProblem({ a: [1, -2.5, 0, 1e-130, -0.5e-129, Number.MAX_SAFE_INTEGER, "x", null, true] }, 1024),
    ).toBeUndefined();
    expect(storableProblem(nested(STORED_MAX_DEPTH - 1), 1024)).toBeUndefined();
  });

  it.each([
    ["a map nested too deep", nested(STORED_MAX_DEPTH + 1), /nest/],
    ["an unsafe integer", { n: 2 ** 60 }, /number/],
    ["a number beyond 2^53 (every such double is an integer)", [9.9e125], /number/],
    ["a number below 1e-130", { n: -1e-200 }, /number/],
    ["an empty key", { a: { "": 1 } }, /empty key/],
    ["a value over the size", { a: "x".repeat(2000) }, /at most 1024 bytes/],
  ])("refuses %s", (_, value, message) => {
    expect(storableProblem(value, 1024)).toMatch(message);
  });

  it("walks a million levels without overflowing the stack", () => {
    expect(storableProblem(nested(1_000_000), 1024)).toMatch(/nest/);
  });
});
