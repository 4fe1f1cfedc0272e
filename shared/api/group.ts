import type { FunctionGroup, ResponseSpec, RouteSpec } from "#shared/http/route.ts";
import { problemSchema } from "#shared/schemas/common.ts";

/** An error answer of a route: its description, with a problem+json body. */
export const problem = (description: string) => ({ description, schema: problemSchema });

/** What every route behind a key (tenant or root) may answer; routeGroup adds them, once, here. */
export const COMMON_RESPONSES = {
  400: problem("Invalid input"),
  401: problem("Missing, invalid or revoked key"),
  403: problem("The key lacks the permission"),
  423: problem(
    "The tenant's own KMS key refuses (disabled, grant revoked): nothing of the tenant is sealed or opened until it is back",
  ),
  429: problem(
    "The tenant's request budget, or its share of expression render time, is spent; Retry-After says when to retry",
  ),
} as const satisfies Record<number, ResponseSpec>;

/** What a route browsers may call answers besides (shared/http/middleware/cors.ts). */
const CORS_RESPONSES = {
  403: problem(
    "The key lacks the permission, or the request's Origin is not one of its application's allowed_origins",
  ),
} as const satisfies Record<number, ResponseSpec>;

/** A route as its group's file writes it: the group and the tag come from routeGroup. */
export type GroupRoute = Omit<RouteSpec, "group" | "tags">;

type InGroup<G extends FunctionGroup, R extends GroupRoute> = Omit<R, "responses"> & {
  group: G;
  tags: readonly [G];
  responses: Record<number, ResponseSpec>;
};

/**
 * The routes of one function group: each gets the group, the group as its OpenAPI tag, and (unless anyone
 * may call it) the common error answers. Literal types are kept so handlers get typed params, query and body.
 */
export function routeGroup<const G extends FunctionGroup, const T extends Record<string, GroupRoute>>(
  group: G,
  routes: T,
): { [K in keyof T]: InGroup<G, T[K]> } {
  return Object.fromEntries(
    Object.entries(routes).map(([operationId, route]) => [
      operationId,
      {
        ...route,
        group,
        tags: [group],
        responses:
          route.auth === "none"
            ? route.responses
            : { ...route.responses, ...COMMON_RESPONSES, ...(route.cors ? CORS_RESPONSES : {}) },
      },
    ]),
  ) as { [K in keyof T]: InGroup<G, T[K]> };
}
