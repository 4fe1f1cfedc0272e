import fc from "fast-check";
import { JSONPath } from "jsonpath-plus";
import { describe, expect, it } from "vitest";
import { firstMatch, JsonPathTooCostly, parseJsonPath } from "#shared/domain/tokens/json-path.ts";

const key = fc.constantFrom("a", "b", "0", "1", "length");
const { node } = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    fc.integer(),
    fc.string({ maxLength: 3 }),
    fc.constant(null),
    fc.array(tie("node"), { maxLength: 3 }),
    fc.dictionary(key, tie("node"), { maxKeys: 3 }),
  ),
}));
const container = fc.oneof(fc.array(node, { maxLength: 3 }), fc.dictionary(key, node, { maxKeys: 3 }));

/** A path of the supported form, each step written in one of its spellings, with at most one descent. */
const path = fc
  .tuple(
    fc.array(
      fc.oneof(
        key.chain((name) => fc.constantFrom(`.${name}`, `['${name}']`, `["${name}"]`)),
        fc.constantFrom(".*", "[*]"),
        fc.nat(2).map((index) => `[${index}]`),
      ),
      { minLength: 1, maxLength: 4 },
    ),
    fc.option(fc.nat(3)),
  )
  .map(([steps, descent]) => {
    const at = descent === null ? -1 : descent % steps.length;
    // A descent: `..name`, `..*` or `..[…]`.
    return `$${steps.map((step, i) => (i !== at ? step : step.startsWith(".") ? `.${step}` : `..${step}`)).join("")}`;
  });

describe("the json filter's JSONPath walk (shared/domain/tokens/json-path.ts)", () => {
  it("answers jsonpath-plus's first match for every path of its form (property)", () => {
    fc.assert(
      fc.property(container, path, (json, text) => {
        const parsed = parseJsonPath(text);
        expect(parsed, text).toBeDefined();
        const expected = JSONPath({ path: text, json, eval: false, wrap: true }) as unknown[];
        expect(firstMatch(json, parsed as NonNullable<typeof parsed>), text).toStrictEqual(expected[0]);
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses what jsonpath-plus would read as more than one descent, a union, a slice or a filter", () => {
    // Found by review (27 Nov 2026) past a check of the string: jsonpath-plus turns `;;` into `..` and matches
    // quotes loosely, so these ran five descents (seconds of the process for 60 levels of data).
    for (const text of [
      "$.a;;a;;a;;a;;a",
      `$['x"]..*..*..*..*..*["z']`,
      "$..*..*",
      "$..a..b",
      "$[*,*]",
      "$[0:2]",
      "$['a','b']",
      "$.a~",
      "$.^",
      "$.a%",
      "$..",
      "$.",
      "$a",
      "a",
      "$[-1]",
      "$['a]",
    ])
      expect(parseJsonPath(text), text).toBeUndefined();
  });

  it("bounds the steps of a path and the values one evaluation visits (review of round 7)", () => {
    // After a descent every step goes over what the descent found: 2,000 `.*` over 32,000 levels held the
    // process 18 s through one public-key create, although each step alone was linear.
    expect(parseJsonPath(`$..*${".*".repeat(31)}`)).toBeDefined();
    expect(parseJsonPath(`$..*${".*".repeat(32)}`)).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 32_000; i++) deep = [deep];
    const steps = parseJsonPath(`$..*${".*".repeat(31)}`) as NonNullable<ReturnType<typeof parseJsonPath>>;
    expect(() => firstMatch(deep, steps)).toThrow(JsonPathTooCostly);
    let shallow: unknown = 1;
    for (let i = 0; i < 100; i++) shallow = [shallow];
    expect(firstMatch(shallow, steps)).toEqual(JSON.parse(`${"[".repeat(68)}1${"]".repeat(68)}`));
  });

  it("walks each container once, so a descent over deep or shared data stays linear", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40_000; i++) deep = { a: deep };
    const parsed = parseJsonPath("$..b") as NonNullable<ReturnType<typeof parseJsonPath>>;
    expect(firstMatch(deep, parsed)).toBeUndefined(); // 40,000 levels: no stack overflow
    const shared: unknown[] = [];
    let layer: unknown = { x: 1 };
    for (let i = 0; i < 64; i++) layer = [layer, layer]; // 2^64 paths to the same few objects
    shared.push(layer);
    expect(firstMatch(shared, parseJsonPath("$..x") as NonNullable<ReturnType<typeof parseJsonPath>>)).toBe(
      1,
    );
    expect(
      firstMatch(shared, parseJsonPath("$..*.*.*.y") as NonNullable<ReturnType<typeof parseJsonPath>>),
    ).toBe(undefined);
  });
});
