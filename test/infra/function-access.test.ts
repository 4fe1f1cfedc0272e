/**
 * What each function group is granted (shared/http/route.ts GROUP_DATA_KEYS) against what its routes do: a group
 * whose routes store idempotent answers seals them under the tenant's data or answer keys, so it must hold those. Without it the
 * function would fail every idempotent request in AWS (shared/composition/core.ts fails closed).
 */
import { describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { GROUP_DATA_KEYS, honoursIdempotencyKey } from "#shared/http/route.ts";

describe("function access", () => {
  it("grants data or answer keys to every group with an idempotent route", () => {
    const idempotentGroups = new Set(routeList.filter(honoursIdempotencyKey).map((route) => route.group));
    expect(idempotentGroups.size).toBeGreaterThan(5);
    const missing = [...idempotentGroups].filter(
      (group) => GROUP_DATA_KEYS[group] !== "data" && GROUP_DATA_KEYS[group] !== "answers",
    );
    expect(missing).toEqual([]);
  });
});
