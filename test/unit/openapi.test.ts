import { describe, expect, it } from "vitest";
import { type ApiRoute, listRoutes, type RouteTable } from "#shared/http/route.ts";
import { openApiDocument } from "#shared/openapi.ts";

/** A table of routes as a new group might declare them, none of them written with OpenAPI in mind. */
const table = {
  getThing: {
    method: "GET",
    path: "/things/{thingId}/parts/{rest+}",
    group: "system",
    auth: "key",
    summary: "A route without a params schema, with a greedy tail",
    tags: ["system"],
    responses: { 200: { description: "ok" } },
  },
  publicThing: {
    method: "POST",
    path: "/things/public",
    group: "system",
    auth: "none",
    summary: "Anyone may call it",
    tags: ["system"],
    responses: { 202: { description: "ok" } },
  },
  joinThing: {
    method: "PATCH",
    path: "/things/{id}",
    group: "system",
    auth: "key",
    transactional: true,
    idempotent: false,
    summary: "Joins transactions, not idempotent",
    tags: ["system"],
    responses: { 200: { description: "ok" } },
  },
} satisfies RouteTable;

const routes: readonly ApiRoute[] = listRoutes(table);
const document = openApiDocument(routes);
type Op = { security?: unknown; parameters?: { name: string; in: string; required?: boolean }[] };
const op = (path: string, method: string) =>
  (document.paths?.[path] as Record<string, Op> | undefined)?.[method] as Op;

describe("the OpenAPI generator", () => {
  it("declares every path template as a parameter, greedy ones in OpenAPI's syntax", () => {
    expect(Object.keys(document.paths ?? {})).toContain("/things/{thingId}/parts/{rest}");
    expect(op("/things/{thingId}/parts/{rest}", "get").parameters).toEqual([
      expect.objectContaining({ name: "thingId", in: "path", required: true }),
      expect.objectContaining({ name: "rest", in: "path", required: true }),
    ]);
  });

  it("states every operation's security, a public one as an empty list", () => {
    expect(op("/things/public", "post").security).toEqual([]);
    expect(op("/things/{thingId}/parts/{rest}", "get").security).toEqual([{ ApiKey: [] }]);
  });

  it("lists the headers a route reads from its flags", () => {
    const headers = (o: Op) => (o.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);
    expect(headers(op("/things/public", "post"))).toEqual(["SVC-IDEMPOTENCY-KEY"]);
    expect(headers(op("/things/{id}", "patch"))).toEqual(["SVC-TRANSACTION-ID"]);
  });
});
