/**
 * Review s53: a mask of at most 16 filtered plain paths is evaluated with no turn of the render slot and no draw on
 * the request's budget or the tenant's share (expressions.ts readsDirectly, evaluateStructure). Each string may
 * apply four vault filters to 256 characters (a multi-unit mask character doubles what each filter writes), and is
 * read twice (readsDirectly, then walk): about 0.1 ms a string, 1.6-2 ms a token on this machine, so a list or
 * detokenization of 100 such tokens spends far more than a request's whole budget (200 ms by default) uncharged.
 * Now direct reads are uncharged only within MAX_DIRECT_WORK units (plain-path.ts) a call or a structure, more takes
 * a charged turn, and a structure's strings are read once.
 */
import { describe, expect, it } from "vitest";
import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { RenderScheduler, TIME_LIMIT } from "#shared/domain/tokens/render-budget.ts";
import { meterCountingEngine } from "#test/support/render-meter.ts";

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

describe("filtered plain paths and the render budget", () => {
  it("a request that spends more than its budget through direct masks is stopped (or charged)", async () => {
    const scheduler = new RenderScheduler(
      { requestMs: 50, renderMs: 50, tenantMsPerSecond: 1000, tenantBurstMs: 1000 },
      { now: () => new Date() },
    );
    const engine = createExpressionEngine({}, { scheduler });
    const heavy = `{{ data.s | reveal: 1, 1, "😀" | reveal: 1, 1, "😀" | reveal: 1, 1, "😀" | reveal: 1, 1, "😀" }}`;
    // 16 distinct strings (each its own cache entry): the most read directly, uncharged.
    const mask = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, heavy + " ".repeat(i)]));
    for (const template of Object.values(mask)) await engine.validate(template);
    const data = { s: "a".repeat(256) };
    const request = engine.forRequest("tenant-a");
    const before = cpuMs();
    const outcome = await (async () => {
      try {
        // 100 tokens: a page of a token list, or one detokenization (MAX_DETOKENIZED).
        for (let token = 0; token < 100; token++) await request.evaluateStructure(mask, { data });
        // Any render liquidjs does after that (a search index, another mask) should find the budget spent.
        await request.render("{{ data.s | upcase | slice: 0, 2 }}", { data });
        return "ran to the end";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    const spent = cpuMs() - before;
    // Precondition: the request's expressions used more CPU than its whole budget (50 ms here).
    expect(spent).toBeGreaterThan(50);
    // Found: "ran to the end": nothing of it was charged to the request (nor to the tenant's share).
    expect(outcome).toBe(TIME_LIMIT);
  });
});

describe("filtered plain paths: uncharged only while their work is small (MAX_DIRECT_WORK)", () => {
  it("a small mask (three strings on a 19-digit number, two filters each) reads directly, uncharged", async () => {
    const { engine, reads } = meterCountingEngine();
    const mask = {
      number: "{{ data.number | reveal_last: 4 | reveal: 0, 4 }}",
      bin: "{{ data.number | card_bin | reveal: 6 }}",
      masked: "{{ data.number | card_mask | last4 }}",
    };
    for (const template of Object.values(mask)) await engine.validate(template);
    const request = engine.forRequest("tenant-a");
    const data = { number: "4242424242424242123" };
    for (let token = 0; token < 3; token++)
      expect(await request.evaluateStructure(mask, { data })).toEqual({
        number: "XXXXXXXXXXXXXXX2123",
        bin: "424242XX",
        masked: "2123",
      });
    expect(reads.count).toBe(0);
  });

  it("a larger one takes a charged turn, with the same answer", async () => {
    const { engine, reads } = meterCountingEngine();
    const mask = { a: "{{ data.s | reveal_last: 4 }}", b: "{{ data.s | last4 }}" };
    for (const template of Object.values(mask)) await engine.validate(template);
    const request = engine.forRequest("tenant-a");
    const data = { s: "a".repeat(100) }; // 2 × 101 units: more than MAX_DIRECT_WORK
    expect(await request.evaluateStructure(mask, { data })).toEqual({
      a: `${"X".repeat(96)}aaaa`,
      b: "aaaa",
    });
    expect(reads.count).toBe(2); // the turn's start and end: the request's budget is spent now
    await expect(request.evaluateStructure(mask, { data })).rejects.toThrow(TIME_LIMIT);
  });

  it("so is one render or evaluate whose filters work on more than that", async () => {
    const { engine, reads } = meterCountingEngine();
    const template = "{{ data.s | reveal: 1 | reveal: 2 }}";
    await engine.validate(template);
    const request = engine.forRequest("tenant-a");
    expect(await request.evaluate(template, { data: { s: "abcdef" } })).toBe("aXXXXX");
    expect(reads.count).toBe(0);
    expect(await request.render(template, { data: { s: "a".repeat(200) } })).toBe(`a${"X".repeat(199)}`);
    expect(reads.count).toBe(2);
    await expect(request.evaluate(template, { data: { s: "a".repeat(200) } })).rejects.toThrow(TIME_LIMIT);
  });

  it("read each string of a direct mask once", async () => {
    const engine = createExpressionEngine({}, { meter: () => 0 });
    const mask = {
      number: "{{ data.number | reveal_last: 4 }}",
      again: ["{{ data.number | reveal_last: 4 }}"],
    };
    await engine.validate(mask.number);
    let reads = 0;
    const data = {
      get number() {
        reads += 1;
        return "4242424242424242";
      },
    };
    expect(await engine.evaluateStructure(mask, { data })).toEqual({
      number: "XXXXXXXXXXXX4242",
      again: ["XXXXXXXXXXXX4242"],
    });
    expect(reads).toBe(1); // before: 4 (each string read by readsDirectly, then again by walk)
  });
});
