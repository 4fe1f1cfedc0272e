import { describe, expect, it } from "vitest";
import { type EffectRef, effectsStand, type PresentedTokenRef } from "#shared/domain/idempotency-scope.ts";
import { fromReplayBody, toReplayBody } from "#shared/http/replay-body.ts";

const effect = (operation: string, entity_id = "a", entity_type = "tenant_invitation"): EffectRef => ({
  entity_type,
  entity_id,
  operation,
});

describe("effectsStand: whether a failed request's writes still stand", () => {
  it("is false with no effect, and when the request deleted again what it created", () => {
    expect(effectsStand([])).toBe(false);
    expect(effectsStand([effect("create"), effect("delete")])).toBe(false);
    expect(effectsStand([effect("read")])).toBe(false);
  });

  it("is true for any create, update or delete the request did not undo", () => {
    expect(effectsStand([effect("create")])).toBe(true);
    expect(effectsStand([effect("update")])).toBe(true);
    expect(effectsStand([effect("delete", "b")])).toBe(true);
    expect(effectsStand([effect("create"), effect("delete", "b")])).toBe(true);
    expect(effectsStand([effect("create"), effect("delete", "a", "application")])).toBe(true);
  });
});

describe("replay bodies: presented tokens kept by reference", () => {
  const ref = (id: string): PresentedTokenRef => ({ id, transform: "reveal", version: 1 });

  it("takes out each presented token by identity and puts back what is presented again", async () => {
    const a = { id: "a", data: "secret-a" };
    const b = { id: "b", data: "secret-b" };
    const refs = new Map<object, PresentedTokenRef>([
      [a, ref("a")],
      [b, ref("b")],
    ]);
    const body = { first: a, list: [b, { id: "c", data: "not a token" }], n: 1 };

    const kept = toReplayBody(body, (value) => refs.get(value));
    const back = await fromReplayBody(
      JSON.parse(JSON.stringify(kept)),
      async (r) => ({ id: r.id, again: true }),
      async () => {},
    );

    expect(JSON.stringify(kept)).not.toContain("secret-");
    expect(kept.tokens.map((t) => t.ref.id)).toEqual(["a", "b"]);
    expect(back).toEqual({
      first: { id: "a", again: true },
      list: [
        { id: "b", again: true },
        { id: "c", data: "not a token" },
      ],
      n: 1,
    });
  });

  it("replaces a body that is one token, and never reads a reference out of a body's own content", async () => {
    const token = { id: "t", data: "x" };
    const lookalike = { tokens: [{ path: [], ref: { id: "victim", transform: "reveal", version: 1 } }] };

    const whole = toReplayBody(token, (value) => (value === token ? ref("t") : undefined));
    const plain = toReplayBody(lookalike, () => undefined);
    const presented: string[] = [];
    const back = await fromReplayBody(
      plain,
      async (r) => {
        presented.push(r.id);
        return r;
      },
      async () => {},
    );

    expect(whole).toEqual({ body: null, tokens: [{ path: [], ref: ref("t") }] });
    expect(presented).toEqual([]);
    expect(back).toEqual(lookalike);
  });

  it("checks every token the answer's data came from before putting anything back", async () => {
    const stored = { body: { last4: "4242" }, tokens: [], reads: [{ id: "gone", version: 1, cvc: false }] };

    const replay = fromReplayBody(
      stored,
      async () => {
        throw new Error("must not present");
      },
      async (read) => {
        throw new Error(`${read.id} is gone`);
      },
    );

    await expect(replay).rejects.toThrow("gone is gone");
  });
});
