import { describe, expect, it } from "vitest";
import { cast, validateArgs } from "#shared/domain/reactors/args.ts";

describe("validateArgs (the spec's six rules)", () => {
  it("accepts any args when no parameter is declared", () => {
    expect(validateArgs({ anything: [1, 2], x: "y" }, [])).toEqual({
      ok: true,
      args: { anything: [1, 2], x: "y" },
    });
    expect(validateArgs(undefined, [])).toEqual({ ok: true, args: {} });
  });

  it("matches names exactly and case-sensitively, with dotted nested names, removing undeclared args", () => {
    const result = validateArgs(
      {
        Card: "x",
        card: { number: "4242", extra: 1 },
        user: { address: { city: "Oslo", zip: "0150" } },
        other: 1,
      },
      [
        { name: "card.number", type: "string" },
        { name: "user.address.city", type: "string" },
      ],
    );

    expect(result).toEqual({
      ok: true,
      args: { card: { number: "4242" }, user: { address: { city: "Oslo" } } },
    });
  });

  it("requires non-optional parameters and allows optional ones to be omitted", () => {
    expect(validateArgs({}, [{ name: "amount", type: "number" }])).toEqual({
      ok: false,
      errors: { "args.amount": ["is required"] },
    });
    expect(validateArgs({}, [{ name: "note", type: "string", optional: true }])).toEqual({
      ok: true,
      args: {},
    });
  });

  it("casts what it can and refuses what it cannot", () => {
    expect(
      validateArgs({ amount: "12.5", live: "true", label: 7 }, [
        { name: "amount", type: "number" },
        { name: "live", type: "boolean" },
        { name: "label", type: "string" },
      ]),
    ).toEqual({ ok: true, args: { amount: 12.5, live: true, label: "7" } });
    expect(validateArgs({ amount: "twelve" }, [{ name: "amount", type: "number" }])).toEqual({
      ok: false,
      errors: { "args.amount": ["must be a number"] },
    });
    expect(validateArgs({ live: "yes" }, [{ name: "live", type: "boolean" }]).ok).toBe(false);
    expect(validateArgs({ label: { a: 1 } }, [{ name: "label", type: "string" }]).ok).toBe(false);
  });

  it("refuses args that are not an object", () => {
    expect(validateArgs([1], [{ name: "a", type: "string" }]).ok).toBe(false);
  });

  it("lets one complex value supply several parameters (validation runs after detokenization)", () => {
    const card = { number: "4242424242424242", expiration_month: 12, expiration_year: 2030 };
    expect(
      validateArgs({ card }, [
        { name: "card.number", type: "string" },
        { name: "card.expiration_month", type: "number" },
      ]),
    ).toEqual({ ok: true, args: { card: { number: card.number, expiration_month: 12 } } });
  });
});

describe("cast", () => {
  it("never turns empty or non-finite strings into numbers", () => {
    expect(cast("", "number")).toBeUndefined();
    expect(cast("Infinity", "number")).toBeUndefined();
    expect(cast(0, "boolean")).toBe(false);
  });
});
