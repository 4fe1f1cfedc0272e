import { mayEverHold } from "#shared/domain/access-rules.ts";
import type { Authenticator } from "#shared/domain/authentication.ts";
import type { Principal } from "#shared/domain/entities.ts";
import { forbidden, unauthorized } from "#shared/domain/errors.ts";
import { isTokenPermission } from "#shared/domain/permissions.ts";
import { header, type SvcMiddleware, type SvcRequest } from "../request-state.ts";
import type { FunctionGroup, RouteSpec } from "../route.ts";

/**
 * A write of the control plane (applications, keys, proxies, reactors, members, tenants), or any route whose
 * answer holds a credential (answersCredential: a GET of a proxy's key or of the webhook secret too): what it
 * grants, binds or hands out is judged against the caller's grant as stored now, not as a warm instance cached it
 * (authenticate's `fresh`). Other token routes keep the cache: their effects are judged again at each use.
 */
const CONTROL_PLANE: ReadonlySet<FunctionGroup> = new Set([
  "applications",
  "proxies",
  "reactors",
  "members",
  "tenants",
]);
const needsFreshKey = (route: Pick<RouteSpec, "group" | "method" | "permissions" | "answersCredential">) =>
  route.answersCredential === true ||
  (CONTROL_PLANE.has(route.group) &&
    route.method !== "GET" &&
    !(route.permissions ?? []).some(isTokenPermission));

/**
 * Resolves SVC-API-KEY for routes that need a key, then checks the route's permissions.
 * 401: missing, unknown or revoked key. 403: a valid key of the wrong kind or without the permission.
 * `authenticator` is asked for on the first request (functions compose their ports lazily).
 * `fresh`: the second pass, after the rate limit, for control-plane writes and credentials only (needsFreshKey): the key
 * looked up in the store again and every check made again on what it says now. After the rate limit, so a flood
 * of refused writes costs the shared table no lookups (round 6).
 */
export function authenticateAndAuthorize(
  authenticator: () => Pick<Authenticator, "authenticate"> & Partial<Pick<Authenticator, "cached">>,
  options: { fresh?: boolean } = {},
): SvcMiddleware {
  const check = async (request: SvcRequest, route: RouteSpec) => {
    const principal = await authenticator().authenticate(header(request.event, "svc-api-key"), {
      rootAllowed: route.auth === "root",
      fresh: options.fresh === true,
    });
    authorize(request, route, principal);
  };
  return {
    // A route without a key, or the second pass of a route that needs none (nearly all): answered at once.
    before: (request) => {
      const route = request.context.svc.route;
      if (!route || route.auth === "none") return;
      // Root routes are the operator's: their key is no grant that can be narrowed, the first pass stands.
      if (options.fresh && (route.auth === "root" || !needsFreshKey(route))) return;
      // A key the cache knows (nearly every request): judged in this turn, with no promise.
      const cached =
        options.fresh || route.auth === "root"
          ? undefined
          : authenticator().cached?.(header(request.event, "svc-api-key"));
      if (cached) return authorize(request, route, cached);
      return check(request, route);
    },
  };
}

/** The request's principal checked against the route: its kind, then the route's permissions. */
function authorize(request: SvcRequest, route: RouteSpec, principal: Principal | undefined): void {
  if (!principal)
    throw unauthorized(
      route.auth === "root" ? "This endpoint requires the deployment's root key in SVC-API-KEY." : undefined,
    );
  request.context.svc.principal = principal;

  if (route.auth === "root") {
    if (principal.kind !== "root") throw forbidden("Only the deployment's root key may call this endpoint.");
    return;
  }
  if (principal.kind === "root") throw unauthorized();
  if (principal.kind === "session" && !route.allowSessions)
    throw forbidden("Session keys can only be used for token operations.");
  const grants =
    principal.kind === "session"
      ? [
          principal.session.authorized ? principal.session : { permissions: [], rules: [] },
          principal.application,
        ]
      : [principal.application];
  const missing = (route.permissions ?? []).filter((p) => !grants.every((grant) => mayEverHold(grant, p)));
  if (missing.length > 0) throw forbidden(`The key lacks the permission ${missing.join(", ")}.`);
}
