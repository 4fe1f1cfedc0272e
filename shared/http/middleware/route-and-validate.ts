import type * as z from "zod";
import { config } from "#shared/config.ts";
import { notFound, payloadTooLarge, validationError } from "#shared/domain/errors.ts";
import { FieldErrorList } from "#shared/domain/field-errors.ts";
import { bodyProblem, jsonTextDepth, MAX_JSON_DEPTH } from "#shared/domain/json-guard.ts";
import { FORBIDDEN_KEY_MESSAGE, hasForbiddenSegment, nullObject } from "#shared/domain/safe-keys.ts";
import { methodNotAllowed, unsupportedMediaType } from "../errors.ts";
import { RouteMatcher } from "../match.ts";
import { header, type MatchedRoute, type SvcMiddleware } from "../request-state.ts";
import { routeKeyOf } from "../route.ts";

/**
 * Repeated query parameters become arrays (API Gateway joins them with commas, so read the raw string).
 * The names come from the caller: the map has no prototype, and a name that is or has a dotted segment
 * `__proto__`, `prototype` or `constructor` (`metadata.__proto__`) is refused.
 */
export function parseQuery(rawQueryString: string | undefined): Record<string, string | string[]> {
  const result = nullObject<string | string[]>();
  if (!rawQueryString) return result;
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    if (hasForbiddenSegment(name))
      throw validationError("The query string is invalid.", { [name]: [FORBIDDEN_KEY_MESSAGE] });
    const existing = result[name];
    result[name] = existing === undefined ? value : [existing, value].flat();
  }
  return result;
}

function check<S extends z.ZodType>(schema: S, value: unknown, what: string, prefix?: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new FieldErrorList().addIssues(parsed.error.issues, prefix).error(`The ${what} is invalid.`);
  return parsed.data;
}

/**
 * Parses a JSON body that nests at most MAX_JSON_DEPTH levels (checked on the text, before parsing) and
 * whose object keys are never `__proto__`, `prototype` or `constructor` (checked before zod or any domain
 * code walks the value). Both checks are loops, not recursion.
 */
export function parseJsonBody(raw: string): unknown {
  // Nesting deeper than the limit takes more opening brackets than a shorter text holds.
  if (raw.length > MAX_JSON_DEPTH && jsonTextDepth(raw, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    throw validationError(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, {
      body: [`must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`],
    });
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw validationError("The request body is not valid JSON.");
  }
  const problem = bodyProblem(value);
  if (problem?.kind === "reserved-key")
    throw validationError("The request body uses a reserved key.", {
      [problem.path.slice(0, 300)]: [FORBIDDEN_KEY_MESSAGE],
    });
  if (problem?.kind === "inexact-number")
    throw validationError("The request body holds a number too large to keep exactly.", {
      [problem.path.slice(0, 300)]: [
        "must be at most 2^53 − 1 (9007199254740991) in magnitude: send larger numbers and long digit strings as strings",
      ],
    });
  if (problem)
    throw validationError("The request body holds a number too large to store.", {
      [problem.path.slice(0, 300)]: ["must be a finite number (at most about 1.8e308)"],
    });
  return value;
}

/**
 * Finds the route among `routes` (by API Gateway's routeKey, or by path for the $default route) and enforces the
 * body size: what authentication needs (the route's auth mode and permissions), and nothing that reads the body.
 */
export function matchRoute(routes: readonly MatchedRoute[], group: string): SvcMiddleware {
  const byRouteKey = new Map<string, MatchedRoute>(routes.map((r) => [routeKeyOf(r), r]));
  const matcher = new RouteMatcher(routes);
  return {
    before: (request) => {
      const { event } = request;
      const state = request.context.svc;
      let route = byRouteKey.get(event.routeKey);
      let pathParameters = event.pathParameters ?? {};
      if (!route) {
        const method = event.requestContext.http.method.toUpperCase();
        const found = matcher.match(method, event.rawPath);
        if (found && "allowed" in found) throw methodNotAllowed(found.allowed);
        if (!found) throw notFound(`The route ${method} ${event.rawPath}`);
        route = found.route;
        pathParameters = found.pathParameters;
      }
      // A route of another group reaching this function is a wiring error, never served here.
      if (route.group !== group) throw notFound(`The route ${route.method} ${route.path}`);
      state.route = route;
      state.pathParameters = pathParameters;

      const limit = route.maxBodyBytes ?? config().maxBodyBytes;
      const size = Buffer.byteLength(event.body ?? "", event.isBase64Encoded ? "base64" : "utf8");
      if (size > limit) throw payloadTooLarge(limit);
    },
  };
}

/**
 * Validates the matched route's params, query, content type and body with its zod schemas: after authentication,
 * so a caller without a valid key learns 401 and nothing of what the route accepts, and no body of an
 * unauthenticated caller is parsed.
 */
export function validateRequest(): SvcMiddleware {
  return {
    before: (request) => {
      const { event } = request;
      const state = request.context.svc;
      const route = state.route;
      if (!route) return;
      state.params = route.params ? check(route.params, state.pathParameters ?? {}, "path", undefined) : {};
      state.query = route.query ? check(route.query, parseQuery(event.rawQueryString), "query string") : {};
      if (route.body) {
        if (route.contentType) {
          const contentType = header(event, "content-type")?.split(";")[0]?.trim().toLowerCase();
          if (contentType !== route.contentType) throw unsupportedMediaType(route.contentType);
        }
        const raw = event.body ?? "";
        const text = event.isBase64Encoded ? Buffer.from(raw, "base64").toString("utf8") : raw;
        if (text.trim() === "") throw validationError("A JSON request body is required.");
        state.body = check(route.body, parseJsonBody(text), "request body");
      }
    },
  };
}
