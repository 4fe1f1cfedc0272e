/**
 * What each function group is granted (lib/function-groups.ts) against what its routes do: a group whose
 * routes store idempotent answers seals them under the data key, so it must hold that key. Without it the
 * function would fail every idempotent request in AWS (shared/composition/core.ts fails closed).
 */
import { describe, expect, it } from "vitest";
import { FUNCTION_ACCESS } from "#lib/function-groups.ts";
import { routeList } from "#shared/api/index.ts";
import { honoursIdempotencyKey } from "#shared/http/route.ts";

describe("function access", () => {
  it("grants the data key to every group with an idempotent route", () => {
    const idempotentGroups = new Set(routeList.filter(honoursIdempotencyKey).map((route) => route.group));
    expect(idempotentGroups.size).toBeGreaterThan(5);
    const missing = [...idempotentGroups].filter((group) => !FUNCTION_ACCESS[group].dataKey);
    expect(missing).toEqual([]);
  });
});
