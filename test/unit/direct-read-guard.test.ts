/**
 * Review s53: a filtered plain path calls the vault filter's function directly, without guardFilter's argument
 * checks (liquid-bounds.ts checkArguments): a quoted count of more than 256 digits is refused by liquidjs and
 * accepted by the direct read. Not a leak (the count is the same number), but the two paths answer differently
 * for one template, and whether a mask renders then depends on the data's length (256 characters).
 * Now directFilters runs the same checkArguments at parse time and leaves what it refuses to liquidjs.
 */
import { describe, expect, it } from "vitest";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";

const engine = createExpressionEngine({}, { meter: () => 0 });
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: (error as Error).message }),
  );

describe("filtered plain paths and guardFilter", () => {
  it("refuse what liquidjs's guarded filter refuses", async () => {
    const count = `"${"0".repeat(300)}4"`;
    const data = { number: "4242424242424242" };
    const direct = await outcome(engine.render(`{{ data.number | reveal_last: ${count} }}`, { data }));
    const viaLiquid = await outcome(engine.render(`{{ data["number"] | reveal_last: ${count} }}`, { data }));
    expect(viaLiquid).toEqual({
      error: "A number given to filter 'reveal_last' is longer than 256 characters",
    });
    expect(direct).toEqual(viaLiquid); // found: { value: "XXXXXXXXXXXX4242" }
  });
});
