import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import type { Authenticator } from "#shared/domain/authentication.ts";
import type { Principal, TenantPrincipal } from "#shared/domain/entities.ts";
import { logger } from "#shared/logger.ts";
import { handlerTracing } from "#shared/tracer.ts";
import { authenticateAndAuthorize } from "./middleware/authenticate.ts";
import { errorHandler } from "./middleware/error-handler.ts";
import { type IdempotencyPorts, idempotency } from "./middleware/idempotency.ts";
import { type RateLimitPorts, rateLimit } from "./middleware/rate-limit.ts";
import { requestContext } from "./middleware/request-context.ts";
import "./safe-headers.ts"; // a `__proto__` header line never crashes the process (see there)
import { routeAndValidate } from "./middleware/route-and-validate.ts";
import { type HttpResult, jsonResult, type SvcContext } from "./request-state.ts";
import {
  type BodyOf,
  type FunctionGroup,
  listRoutes,
  type ParamsOf,
  type QueryOf,
  type RouteSpec,
  type RouteTable,
} from "./route.ts";

type PrincipalFor<R extends RouteSpec> = R["auth"] extends "key"
  ? TenantPrincipal
  : R["auth"] extends "root"
    ? Extract<Principal, { kind: "root" }>
    : undefined;

/** The ports of the shared middleware chain; composeCore (shared/composition/core.ts) provides them. */
export type HttpPorts = RateLimitPorts &
  IdempotencyPorts & { authenticator: Pick<Authenticator, "authenticate"> };

export interface HandlerInput<R extends RouteSpec, D = unknown> {
  params: ParamsOf<R>;
  query: QueryOf<R>;
  body: BodyOf<R>;
  principal: PrincipalFor<R>;
  /** The group's composed adapters (its functions/<group>/handler.ts composition). */
  deps: D;
  requestId: string;
  event: APIGatewayProxyEventV2;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A complete result (proxy responses: raw, possibly binary bodies), sent as it is. */
  raw?: HttpResult;
}

export type RouteHandler<R extends RouteSpec, D = unknown> = (input: HandlerInput<R, D>) => Promise<Reply>;

/** The implementations a function group must provide: one per route of the group, no more, no less. */
export type GroupHandlers<T extends RouteTable, G extends FunctionGroup, D> = {
  [K in keyof T as T[K]["group"] extends G ? K : never]: RouteHandler<T[K], D>;
};

/**
 * Builds a function group's Lambda handler: the shared middy chain, then the route's implementation.
 * `routes` is the whole table (shared/api): a route of another group is refused, and the system function,
 * API Gateway's $default route, answers 405 with the methods a known path allows.
 * `compose` builds the group's adapters, once, on the first request (so a module that only defines a
 * handler opens no client): the group's handler.ts in a Lambda, functions/local.ts for the local gateway,
 * which calls exactly this handler with the same event shape.
 */
export function createHttpHandler<T extends RouteTable, G extends FunctionGroup, D extends HttpPorts>(
  routes: T,
  group: G,
  handlers: GroupHandlers<T, G, D>,
  compose: () => D,
) {
  let composed: D | undefined;
  const deps = (): D => {
    composed ??= compose();
    return composed;
  };
  const table = handlers as unknown as Record<string, RouteHandler<RouteSpec, D>>;
  const dispatch = async (event: APIGatewayProxyEventV2, context: SvcContext): Promise<HttpResult> => {
    const state = context.svc;
    const route = state.route;
    const implementation = route ? table[route.operationId] : undefined;
    if (!route || !implementation)
      throw new Error(`No implementation for ${route?.operationId ?? event.routeKey}`);
    const reply = await implementation({
      params: state.params,
      query: state.query,
      body: state.body,
      principal: state.principal,
      deps: deps(),
      requestId: state.requestId,
      event,
    } as HandlerInput<RouteSpec, D>);
    return reply.raw ?? jsonResult(reply.status, reply.body, reply.headers);
  };

  return (
    middy<APIGatewayProxyEventV2, HttpResult, Error, SvcContext>()
      // X-Ray segment of the invocation in Lambda (never the response: it holds token data); outermost, so
      // errors reach it only as the errorHandler's answers.
      .use(handlerTracing())
      // Adds function name, cold start and request id to every log line; never logs the event (keys, data).
      .use(injectLambdaContext(logger, { logEvent: false, resetKeys: true }))
      .use(requestContext())
      .use(errorHandler())
      .use(routeAndValidate(listRoutes(routes), group))
      .use(authenticateAndAuthorize(() => deps().authenticator))
      .use(rateLimit(deps))
      .use(idempotency(deps))
      .handler(dispatch) as unknown as (
      event: APIGatewayProxyEventV2,
      context: Context,
    ) => Promise<HttpResult>
  );
}
