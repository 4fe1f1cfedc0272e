import { describe, expect, it } from "vitest";
import { DomainError } from "#shared/domain/errors.ts";
import { createExpressionEngine, ExpressionError } from "#shared/domain/tokens/expressions.ts";
import { CHECK_EVERY, RenderScheduler, standaloneBudget } from "#shared/domain/tokens/render-budget.ts";
import type { RenderLimits } from "#shared/domain/tokens/render-limits.ts";

/** A meter moved by hand, and a clock moved by hand: no test here reads real time. */
function fakes() {
  let ms = 0;
  let clock = Date.parse("2030-01-01T00:00:00Z");
  return {
    meter: () => ms,
    spend: (n: number) => {
      ms += n;
    },
    clock: { now: () => new Date(clock) },
    advance: (seconds: number) => {
      clock += seconds * 1000;
    },
  };
}

const limits: RenderLimits = { renderMs: 100, requestMs: 200, tenantMsPerSecond: 10, tenantBurstMs: 300 };
const immediate = () => Promise.resolve();

/** Asks as a render does, at every step: the meter is read at every CHECK_EVERY-th question. */
const askedOften = (isOverdue: () => boolean) => {
  let answer = false;
  for (let i = 0; i < CHECK_EVERY; i++) answer = isOverdue();
  return answer;
};

describe("render scheduler", () => {
  it("charges every render of a request to the request's one budget", async () => {
    const f = fakes();
    const scheduler = new RenderScheduler(limits, f.clock, f.meter, immediate);
    const budget = scheduler.budget("tenant#a");

    await budget.run(async () => f.spend(150));
    // 50 ms left: the render's limit is 50, not the 100 of a render.
    const overdue = await budget.run(async (isOverdue) => {
      f.spend(60);
      return askedOften(isOverdue);
    });
    const third = budget.run(async () => "never");

    expect(overdue).toBe(true);
    await expect(third).rejects.toThrow(ExpressionError);
    await expect(third).rejects.toThrow("Expression exceeded its time limit");
    // Another request of the same tenant has its own budget.
    expect(await scheduler.budget("tenant#a").run(async () => "ok")).toBe("ok");
  });

  it("refuses a tenant whose share is spent with a 429 until the clock refills it, others unaffected", async () => {
    const f = fakes();
    const scheduler = new RenderScheduler(limits, f.clock, f.meter, immediate);
    for (let i = 0; i < 2; i++) await scheduler.budget("tenant#a").run(async () => f.spend(160));

    const refused = scheduler.budget("tenant#a").run(async () => "no");
    await expect(refused).rejects.toBeInstanceOf(DomainError);
    await expect(refused).rejects.toMatchObject({ kind: "rate-limited", retryAfterSeconds: 3 });
    expect(await scheduler.budget("tenant#b").run(async () => "b")).toBe("b");

    f.advance(3);
    expect(await scheduler.budget("tenant#a").run(async () => "again")).toBe("again");
  });

  it("keeps no share with tenantMsPerSecond 0", async () => {
    const f = fakes();
    const scheduler = new RenderScheduler({ ...limits, tenantMsPerSecond: 0 }, f.clock, f.meter, immediate);
    for (let i = 0; i < 10; i++) await scheduler.budget("tenant#a").run(async () => f.spend(100));
    expect(await scheduler.budget("tenant#a").run(async () => "ok")).toBe("ok");
  });

  it("runs one render at a time, tenants in turn: a flood's queue does not hold another tenant back", async () => {
    const f = fakes();
    const scheduler = new RenderScheduler({ ...limits, tenantMsPerSecond: 0 }, f.clock, f.meter, immediate);
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const render = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      order.push(name);
      running--;
    };

    await Promise.all([
      ...[1, 2, 3, 4].map((n) => scheduler.budget("tenant#flood").run(render(`flood${n}`))),
      scheduler.budget("tenant#other").run(render("other")),
    ]);

    expect(most).toBe(1);
    // The flood's first render had the slot; the other tenant's comes next, before the flood's second.
    expect(order.indexOf("other")).toBe(1);
  });

  it("refuses limits that are not positive", () => {
    const f = fakes();
    expect(() => new RenderScheduler({ ...limits, requestMs: 0 }, f.clock)).toThrow(RangeError);
    expect(() => new RenderScheduler({ ...limits, tenantBurstMs: Number.NaN }, f.clock)).toThrow(RangeError);
  });
});

describe("the engine's budgets", () => {
  const HEAVY = "{% for i in (1..100) %}{{ i | plus: 1 }}{% endfor %}";

  it("gives the calls of one request (scoped again or not) one budget, and each standalone call its own", async () => {
    let readings = 0;
    const meter = () => ++readings * 1.5;
    const f = fakes();
    const scheduler = new RenderScheduler({ ...limits, tenantMsPerSecond: 0 }, f.clock, meter, immediate);
    const engine = createExpressionEngine({}, { scheduler, meter });
    const request = engine.forRequest("tenant#a");

    // About 40 ms of readings each: the request's 200 ms hold four, not six.
    const results = [];
    for (let i = 0; i < 6; i++)
      results.push(
        await (i % 2 ? request.forRequest("tenant#b") : request).render(HEAVY, {}).then(
          () => "ok",
          (error: Error) => error.message,
        ),
      );
    const standalone = [];
    for (let i = 0; i < 6; i++) standalone.push(await engine.render(HEAVY, {}).then(() => "ok"));

    expect(results.slice(0, 4)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(results.slice(5)).toEqual(["Expression exceeded its time limit"]);
    expect(standalone).toEqual(Array(6).fill("ok"));
  });

  it("reads the meter whenever 2 ms of real time passed since the last reading, not only every 16th question", async () => {
    // A step of 10–100 ms asked once: 16 of them ran between two readings (review of 27 Nov 2026).
    let readings = 0;
    let wall = 0;
    const moving = standaloneBudget(
      1000,
      1000,
      () => ++readings,
      () => (wall += 3),
    );
    await moving.run(async (isOverdue) => {
      for (let i = 0; i < 5; i++) isOverdue();
    });
    expect(readings).toBe(7); // its start, each of the five questions, its end
    readings = 0;
    const still = standaloneBudget(1000, 1000, () => ++readings);
    await still.run(async (isOverdue) => {
      for (let i = 0; i < 5; i++) isOverdue();
    });
    expect(readings).toBe(2);
  });

  it("stops a standalone call at its limit, by the injected meter", async () => {
    let readings = 0;
    const budget = standaloneBudget(10, 10, () => ++readings);
    const overdue = await budget.run(async (isOverdue) => {
      readings += 20;
      return askedOften(isOverdue);
    });
    expect(overdue).toBe(true);
    await expect(budget.run(async () => "no")).rejects.toThrow("Expression exceeded its time limit");
  });
  it("renders a mask's strings in one turn of the render slot, within one render's limit", async () => {
    const f = fakes();
    let turns = 0;
    const scheduler = new RenderScheduler(limits, f.clock, f.meter, async () => {
      turns += 1;
    });
    const request = createExpressionEngine({}, { scheduler, meter: f.meter }).forRequest("tenant#a");
    const mask = { number: "{{ data.number | reveal_last: 4 }}", month: "{{ data.month }}", brand: "visa" };

    expect(await request.evaluateStructure(mask, { data: { number: "4242424242424242", month: 3 } })).toEqual(
      {
        number: "XXXXXXXXXXXX4242",
        month: 3,
        brand: "visa",
      },
    );
    expect(turns).toBe(1);
    // Nothing to render: no turn taken.
    expect(await request.evaluateStructure({ brand: "visa" }, { data: {} })).toEqual({ brand: "visa" });
    expect(turns).toBe(1);
  });
});
