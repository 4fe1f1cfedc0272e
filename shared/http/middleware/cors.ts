import { forbidden } from "#shared/domain/errors.ts";
import { isOriginAllowed, originError } from "#shared/domain/origins.ts";
import {
  CORS_ALLOWED_HEADERS,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECONDS,
  preflightRoutes,
} from "../cors.ts";
import { RouteMatcher } from "../match.ts";
import { type HttpResult, header, type MatchedRoute, type SvcMiddleware } from "../request-state.ts";
import { headerCollection, withSecurityHeaders } from "../security-headers.ts";

/**
 * The `Origin` of a cross-origin browser request, or undefined: none sent, not a canonical origin, or the API's
 * own (the Elements frame, served from the API's origin, calls it same-origin, and browsers send `Origin` on
 * same-origin POSTs too). The API's own origin is the one the browser addressed: the Host header and the scheme
 * API Gateway reports (locally plain http).
 */
function crossOrigin(request: Parameters<NonNullable<SvcMiddleware["before"]>>[0]): string | undefined {
  const origin = header(request.event, "origin");
  // Browsers send no Origin on a same-origin GET: the Elements frame's own header says whose page it serves.
  if (origin === undefined) return header(request.event, "svc-elements-origin");
  if (origin === "null") return origin;
  if (originError(origin) !== undefined) return origin;
  const host = header(request.event, "host") ?? request.event.requestContext?.domainName;
  const scheme = header(request.event, "x-forwarded-proto") ?? "http";
  if (!host || origin !== `${scheme}://${host.toLowerCase()}`) return origin;
  // The API's own origin: the Elements controller frame, calling for the page that embeds it (the handshake's
  // origin, which frame.js sends). That page's origin is what the key's allowed_origins must list, as if it had
  // called itself: else any page could use any session key through a frame made for its own key.
  return header(request.event, "svc-elements-origin");
}

/**
 * CORS, opted into per route by the route table's `cors` flag, and nowhere else:
 * - a preflight (OPTIONS) on a path with `cors` routes is answered 204 with those methods, for any well-formed
 *   Origin (a preflight carries no key, so which origins a key allows is checked on the actual request);
 * - every answer of a `cors` route to an allowed cross-origin request (errors included) carries
 *   Access-Control-Allow-Origin for that origin alone, never credentials.
 * Registered right after requestContext, so its `after`/`onError` see the errorHandler's answers.
 */
export function corsAnswers(routes: readonly MatchedRoute[]): SvcMiddleware {
  const preflights = new RouteMatcher(preflightRoutes(routes));
  const addHeaders: NonNullable<SvcMiddleware["after"]> = (request) => {
    const state = request.context.svc;
    if (!state?.route?.cors || !request.response) return;
    // A copy with the names added one by one (every answer of a CORS route passes here): spreads of literals
    // took V8's slow paths. A header collection as the answer's own (an ordinary object or a null-prototype map).
    const given = request.response.headers;
    const headers = headerCollection<string | number | boolean>(given);
    if (given)
      for (const name of Object.keys(given)) headers[name] = given[name] as string | number | boolean;
    // The origin checked may come from the Elements frame's header (crossOrigin): answers vary with both.
    headers.vary = "Origin, SVC-Elements-Origin";
    if (state.corsOrigin) {
      headers["access-control-allow-origin"] = state.corsOrigin;
      headers["access-control-expose-headers"] = CORS_EXPOSED_HEADERS;
    }
    request.response.headers = headers;
  };
  return {
    before: (request) => {
      if (request.event.requestContext.http.method.toUpperCase() !== "OPTIONS") return;
      const found = preflights.match("OPTIONS", request.event.rawPath);
      if (!found || !("route" in found)) return; // not a CORS path: 405 as any unknown method
      const origin = crossOrigin(request);
      const allowed = origin !== undefined && originError(origin) === undefined;
      const result: HttpResult = {
        statusCode: 204,
        headers: {
          ...withSecurityHeaders({
            vary: "Origin, SVC-Elements-Origin",
            ...(allowed
              ? {
                  "access-control-allow-origin": origin,
                  "access-control-allow-methods": found.route.methods.join(", "),
                  "access-control-allow-headers": CORS_ALLOWED_HEADERS,
                  "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
                }
              : {}),
          }),
          "svc-request-id": request.context.svc.requestId,
        },
      };
      // An early answer: the chain's later middlewares (and their `after`s) do not run for a preflight.
      return result;
    },
    after: addHeaders,
    onError: addHeaders,
  };
}

/**
 * On a `cors` route, after authentication: a cross-origin request whose Origin the key's application (for a
 * session key, the application that created the session) does not list is refused with 403, without
 * Access-Control-Allow-Origin, before the route does anything.
 */
export function corsOriginCheck(): SvcMiddleware {
  return {
    before: (request) => {
      const state = request.context.svc;
      const principal = state.principal;
      if (!state.route?.cors || !principal || principal.kind === "root") return;
      const origin = crossOrigin(request);
      if (origin === undefined) return;
      if (!isOriginAllowed(principal, origin))
        throw forbidden("The request's Origin is not one of the key's application's allowed_origins.");
      state.corsOrigin = origin;
    },
  };
}
