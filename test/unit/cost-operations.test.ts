import { describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { EXCLUDED, OPERATIONS } from "../../scripts/cost/operations.ts";

/** `npm run cost` (docs/scale.md): no route is left out of the cost table without a stated reason. */
describe("the cost table's operations", () => {
  const measured = new Set(OPERATIONS.flatMap((operation) => operation.routes));
  const known = new Set(routeList.map((route) => route.operationId));

  it("measure or exclude, with a reason, every route of the route table", () => {
    const missing = routeList
      .map((route) => route.operationId)
      .filter((id) => !measured.has(id) && !(EXCLUDED[id] ?? "").trim());
    expect(
      missing,
      "routes with neither a measurement in scripts/cost/operations.ts nor an exclusion",
    ).toEqual([]);
  });

  it("name only routes that exist, and never exclude a route they measure", () => {
    expect([...measured].filter((id) => !known.has(id))).toEqual([]);
    expect(Object.keys(EXCLUDED).filter((id) => !known.has(id as never))).toEqual([]);
    expect([...measured].filter((id) => id in EXCLUDED)).toEqual([]);
  });

  it("cover every operation the issue names", () => {
    const routes = (name: string) => OPERATIONS.filter((op) => op.name.startsWith(name)).length;
    for (const name of [
      "tokenize",
      "read",
      "list",
      "v2 list",
      "search",
      "POST /tokenize",
      "POST /detokenize",
    ])
      expect(routes(name), name).toBeGreaterThan(0);
    for (const name of [
      "PATCH",
      "delete",
      "proxy call",
      "react",
      "session create",
      "session authorize",
      "audit",
    ])
      expect(routes(name), name).toBeGreaterThan(0);
    expect(new Set(OPERATIONS.map((op) => op.name)).size).toBe(OPERATIONS.length);
  });
});
