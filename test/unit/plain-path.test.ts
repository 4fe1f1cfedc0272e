import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createExpressionEngine, ExpressionError } from "#shared/domain/tokens/expressions.ts";
import { plainPathOf } from "#shared/domain/tokens/plain-path.ts";
import { RenderScheduler, TIME_LIMIT } from "#shared/domain/tokens/render-budget.ts";

// A meter that never moves: both sides of the comparison render to the end, however busy the machine (a render
// past its CPU allowance on one side only failed this test under load).
const engine = createExpressionEngine({ maxOutputChars: 64 }, { meter: () => 0 });

/**
 * `{{ data["a"]["b"] }}` is the same lookup as `{{ data.a.b }}` to liquidjs, but not a plain path here: it is
 * always rendered by liquidjs, so it is what a plain path must answer.
 */
const bracketed = (path: readonly string[]) =>
  `{{ ${path[0]}${path
    .slice(1)
    .map((name) => `[${JSON.stringify(name)}]`)
    .join("")} }}`;

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error instanceof ExpressionError ? error.message : String(error) }),
  );

const name = fc.constantFrom("data", "a", "b", "number", "size", "first", "last", "nil", "x_1");
const leaf = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(""),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("value"), { maxLength: 3 }), tie("object")),
  object: fc.dictionary(name, tie("value"), { maxKeys: 4 }),
})).value;

/** Number texts longer than guardFilter takes (refused by liquidjs, so by the direct read too), and just within. */
const LONG_NUMBERS = [
  `"${"0".repeat(300)}4"`,
  `"${"9".repeat(300)}"`,
  `"${"0".repeat(255)}4"`,
  `${"0".repeat(300)}4`,
];
/** A filter argument: short literals, and long ones (LONG_NUMBERS, and a long text that is no number). */
const literal = fc.oneof(
  { arbitrary: fc.integer({ min: -2, max: 20 }), weight: 4 },
  { arbitrary: fc.constantFrom('"4"', '"x"', '"*"', '"#"', '"ab"', '""', "true", "nil"), weight: 4 },
  { arbitrary: fc.constantFrom(...LONG_NUMBERS, `"${"x".repeat(300)}"`), weight: 2 },
);
/** A filter the direct read applies (with literal arguments), or one of liquidjs's own. */
const filter = fc.oneof(
  fc.constant("last4"),
  fc.constant("card_bin"),
  fc
    .array(literal, { maxLength: 3 })
    .map((args) => (args.length ? `card_mask: ${args.join(", ")}` : "card_mask")),
  fc
    .array(literal, { maxLength: 3 })
    .map((args) => (args.length ? `reveal_last: ${args.join(", ")}` : "reveal_last")),
  fc.array(literal, { maxLength: 4 }).map((args) => (args.length ? `reveal: ${args.join(", ")}` : "reveal")),
  fc.constant("upcase"), // liquidjs's own: never read directly
);
/** Renders, evaluates and evaluates in a structure `{{ <path> | <filters> }}` both directly and through liquidjs. */
async function expectAsLiquid(path: readonly string[], leafValue: unknown, filters: readonly string[]) {
  const scope = {
    [path[0] as string]: path.slice(1).reduceRight<unknown>((inner, key) => ({ [key]: inner }), leafValue),
  };
  const chain = filters.map((f) => ` | ${f}`).join("");
  const direct = `{{ ${path.join(".")}${chain} }}`;
  const viaLiquid = `{{ ${bracketed(path).slice(3, -3)}${chain} }}`;
  expect(await outcome(engine.render(direct, scope))).toEqual(await outcome(engine.render(viaLiquid, scope)));
  expect(await outcome(engine.evaluate(direct, scope))).toEqual(
    await outcome(engine.evaluate(viaLiquid, scope)),
  );
  expect(await outcome(engine.evaluateStructure({ a: direct, b: [direct] }, scope))).toEqual(
    await outcome(engine.evaluateStructure({ a: viaLiquid, b: [viaLiquid] }, scope)),
  );
}

describe("plain paths", () => {
  it("are one output tag of a dotted path, never a literal or a special property", () => {
    expect(plainPathOf("{{ data.number }}")).toEqual(["data", "number"]);
    expect(plainPathOf("{{data}}")).toEqual(["data"]);
    expect(plainPathOf("{{ data.number | last4 }}")).toBeUndefined();
    expect(plainPathOf("{{ data.number }}{{ data.cvc }}")).toBeUndefined();
    expect(plainPathOf('{{ data["number"] }}')).toBeUndefined();
    expect(plainPathOf("{{ data.items.size }}")).toBeUndefined();
    expect(plainPathOf("{{ nil }}")).toBeUndefined();
    expect(plainPathOf("{{ empty }}")).toBeUndefined();
  });

  it("render and evaluate exactly as liquidjs does, on any data (errors included)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(name, { minLength: 1, maxLength: 4 }),
        fc.dictionary(name, json, { maxKeys: 5 }),
        fc.constantFrom("", " ", "\n"),
        async (path, scope, around) => {
          const plain = `${around}{{ ${path.join(".")} }}${around}`;
          const viaLiquid = `${around}${bracketed(path)}${around}`;
          expect(await outcome(engine.render(plain, scope))).toEqual(
            await outcome(engine.render(viaLiquid, scope)),
          );
          expect(await outcome(engine.evaluate(plain, scope))).toEqual(
            await outcome(engine.evaluate(viaLiquid, scope)),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("through the vault's string filters render and evaluate exactly as liquidjs does (errors included)", async () => {
    const value = fc.oneof(
      json,
      fc.constantFrom("4242424242424242", "4242 4242 4242 4242", "3782-822463-10005", "12", "", "ab😀cd"),
      fc.integer(),
      fc.string({ minLength: 250, maxLength: 300 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(name, { minLength: 1, maxLength: 3 }),
        value,
        fc.array(filter, { minLength: 1, maxLength: 5 }),
        expectAsLiquid,
      ),
      { numRuns: 300 },
    );
  });

  it("on card numbers, with long number texts as arguments, answer as liquidjs does (errors included)", async () => {
    const card = fc.constantFrom("4242424242424242", "4242424242424242123", "3782-822463-10005", "12");
    const count = fc.constantFrom(...LONG_NUMBERS, "4", '"4"', "0");
    const counting = fc.oneof(
      fc.tuple(count, fc.constantFrom("", ', "*"')).map(([n, mask]) => `reveal_last: ${n}${mask}`),
      fc.tuple(count, count).map(([first, last]) => `reveal: ${first}, ${last}`),
    );
    const filters = fc.array(fc.oneof(filter, counting, counting), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(card, filters, (number, filters) =>
        expectAsLiquid(["data", "number"], number, filters),
      ),
      { numRuns: 200 },
    );
  });

  it("render without a turn of the render slot, a meter reading or a draw on the request's budget", async () => {
    let meterReads = 0;
    const scheduler = new RenderScheduler(
      { requestMs: 50, renderMs: 20, tenantMsPerSecond: 1, tenantBurstMs: 1 },
      { now: () => new Date(0) },
      () => {
        meterReads += 1;
        return meterReads * 100; // every render spends the request's whole budget at once
      },
    );
    const engine = createExpressionEngine({}, { scheduler });
    // Parsed beforehand, outside the request: a parse is charged as a render is; a cached one is not.
    for (const template of ["{{ data.number }}", "{{ data.number | slice: 0, 4 }}"])
      await engine.validate(template);
    const request = engine.forRequest("tenant-a");
    const data = { number: "4242424242424242" };
    expect(await request.render("{{ data.number }}", { data })).toBe("4242424242424242");
    expect(await request.evaluate("{{ data.number }}", { data })).toBe("4242424242424242");
    // The card's default mask, whose number goes through reveal_last: read directly too (filtered plain paths).
    const cardMask = {
      number: "{{ data.number | reveal_last: 4 }}",
      expiration_month: "{{ data.expiration_month }}",
      expiration_year: "{{ data.expiration_year }}",
    };
    for (const template of Object.values(cardMask)) await engine.validate(template);
    const card = { ...data, expiration_month: 12, expiration_year: 2030 };
    expect(await request.evaluateStructure(cardMask, { data: card })).toEqual({
      number: "XXXXXXXXXXXX4242",
      expiration_month: 12,
      expiration_year: 2030,
    });
    expect(meterReads).toBe(0);
    // A render that is no plain path is still timed and charged: the request's budget is spent after it.
    await request.render("{{ data.number | slice: 0, 4 }}", { data });
    expect(meterReads).toBe(2);
    await expect(request.render("{{ data.number | slice: 0, 4 }}", { data })).rejects.toThrow(TIME_LIMIT);
    expect(await request.render("{{ data.number }}", { data })).toBe("4242424242424242");
  });

  it("ask at each string of a mask, so a mask of many plain paths reads the meter too", async () => {
    let reads = 0;
    const engine = createExpressionEngine({}, { meter: () => ++reads });
    const mask = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `{{ data.k${i} }}`]));
    const data = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `v${i}`]));
    expect(await engine.evaluateStructure(mask, { data })).toMatchObject({ k0: "v0", k39: "v39" });
    // The turn's start and end, and every 16th question: 40 strings asked 40 (before, none: two readings).
    expect(reads).toBe(4);
  });
});
