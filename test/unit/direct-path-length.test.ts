/**
 * Review s54: a plain path read directly (no filter) was uncharged whatever its length: MAX_DIRECT_WORK counts only
 * the filters' work. A mask of 16 paths of 1,000 names each (32 KiB) over data nested as deep read 16,000 steps a
 * token outside any charged turn, about 0.8 ms, 80 ms for one page of 100 tokens. Now a path longer than
 * MAX_DIRECT_PATH_NAMES is rendered by liquidjs, in a charged turn.
 */
import { describe, expect, it } from "vitest";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { MAX_DIRECT_PATH_NAMES, plainPathOf } from "#shared/domain/tokens/plain-path.ts";
import { TIME_LIMIT } from "#shared/domain/tokens/render-budget.ts";
import { meterCountingEngine } from "#test/support/render-meter.ts";

const deep = (depth: number, leaf: unknown) => {
  let data = leaf;
  for (let i = 0; i < depth; i++) data = { a: data };
  return data;
};

describe("review s54: unfiltered plain paths are uncharged only while short", () => {
  it("a mask of 16 deep plain paths takes a charged turn, with the same answer", async () => {
    const { engine, reads } = meterCountingEngine();
    const depth = 1000; // 16 strings of ~2 KB: a 32 KiB mask
    const path = Array.from({ length: depth }, () => "a").join(".");
    const mask = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`k${i}`, `{{ data.${path} }}${" ".repeat(i)}`]),
    );
    expect(JSON.stringify(mask).length).toBeLessThanOrEqual(32 * 1024);
    for (const template of Object.values(mask)) await engine.validate(template);
    const request = engine.forRequest("tenant-a");
    const data = deep(depth, "x");
    // This meter spends the request's budget at every reading: the turn may end overdue itself.
    await request
      .evaluateStructure(mask, { data })
      .catch((error: Error) => expect(error.message).toBe(TIME_LIMIT));
    // Found: 0 (read directly, uncharged, however many tokens a request shows).
    expect(reads.count).toBeGreaterThan(0);
    await expect(request.evaluateStructure(mask, { data })).rejects.toThrow(TIME_LIMIT);
    // The answer is liquidjs's, the same as the direct read gave.
    const unmetered = createExpressionEngine({}, { meter: () => 0 });
    expect(await unmetered.evaluateStructure(mask, { data })).toEqual(
      Object.fromEntries(Object.keys(mask).map((key) => [key, "x"])),
    );
  });

  it("a path of MAX_DIRECT_PATH_NAMES names is still read directly, a longer one is not", async () => {
    const names = (n: number) => Array.from({ length: n }, () => "a").join(".");
    expect(plainPathOf(`{{ ${names(MAX_DIRECT_PATH_NAMES)} }}`)).toHaveLength(MAX_DIRECT_PATH_NAMES);
    expect(plainPathOf(`{{ ${names(MAX_DIRECT_PATH_NAMES + 1)} }}`)).toBeUndefined();
    const { engine, reads } = meterCountingEngine();
    const template = `{{ data.${names(MAX_DIRECT_PATH_NAMES - 1)} | last4 }}`;
    await engine.validate(template);
    expect(
      await engine.forRequest("t").evaluate(template, { data: deep(MAX_DIRECT_PATH_NAMES - 1, "123456") }),
    ).toBe("3456");
    expect(reads.count).toBe(0);
  });
});
