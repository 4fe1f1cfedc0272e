import fc from "fast-check";
import { Liquid } from "liquidjs";
import { describe, expect, it } from "vitest";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";

/**
 * Our `sort`, `sort_natural` and `sample` (shared/domain/tokens/liquid-bounds.ts) replace liquidjs's to bound
 * their work; they must answer as liquidjs does wherever liquidjs's work was bounded anyway.
 */
const engine = createExpressionEngine({}, { meter: () => 0 });
/** Ours, through JSON as liquidjs's answer is (-0 and 0 alike). */
const ours = {
  evaluate: async (template: string, scope: Record<string, unknown>) =>
    JSON.parse(JSON.stringify((await engine.evaluate(template, scope)) ?? null)) as unknown,
};
const theirs = new Liquid();

const key = fc.oneof(
  fc.integer({ min: -50, max: 50 }),
  fc.double({ noNaN: true, min: -1e6, max: 1e6 }),
  fc.string({ maxLength: 6 }),
  fc.constantFrom("a", "B", "ä", "Ä", "b", "10", "9"),
  fc.boolean(),
  fc.constant(null),
);
const items = fc.array(key, { maxLength: 30 });
const records = fc.array(fc.record({ k: key, n: fc.nat() }), { maxLength: 20 });

describe("sort, sort_natural and sample, held to liquidjs 10", () => {
  it("sort and sort_natural order as liquidjs's do, items and properties alike", async () => {
    await fc.assert(
      fc.asyncProperty(
        items,
        records,
        fc.constantFrom("sort", "sort_natural"),
        async (list, objects, filter) => {
          const byItem = `{{ data | ${filter} | json }}`;
          const byProperty = `{{ data | ${filter}: 'k' | json }}`;
          expect(await ours.evaluate(`{{ data | ${filter} }}`, { data: list })).toEqual(
            JSON.parse(await theirs.parseAndRender(byItem, { data: list })),
          );
          expect(await ours.evaluate(`{{ data | ${filter}: 'k' }}`, { data: objects })).toEqual(
            JSON.parse(await theirs.parseAndRender(byProperty, { data: objects })),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("sample answers what liquidjs's may: the items, reordered, and as many", async () => {
    await fc.assert(
      fc.asyncProperty(items, fc.integer({ min: 0, max: 40 }), async (list, count) => {
        const sampled = (await ours.evaluate(`{{ data | sample: ${count} }}`, { data: list })) as unknown[];
        const canonical = (values: unknown[]) => values.map((v) => JSON.stringify(v)).sort();
        if (count === 1) {
          if (list.length > 0) expect(list.map((v) => JSON.stringify(v))).toContain(JSON.stringify(sampled));
          return;
        }
        const theirsSampled = JSON.parse(
          await theirs.parseAndRender(`{{ data | sample: ${count} | json }}`, { data: list }),
        ) as unknown[];
        expect(sampled.length).toBe(theirsSampled.length);
        for (const value of canonical(sampled)) expect(canonical(list)).toContain(value);
        if (count >= list.length) expect(canonical(sampled)).toEqual(canonical(list));
      }),
      { numRuns: 300 },
    );
  });
});
