import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import type { Deps } from "#shared/container.ts";
import { deps } from "#shared/container.ts";
import type { Principal, TenantPrincipal } from "#shared/domain/entities.ts";
import { logger } from "#shared/logger.ts";
import { authenticateAndAuthorize } from "./middleware/authenticate.ts";
import { errorHandler } from "./middleware/error-handler.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { rateLimit } from "./middleware/rate-limit.ts";
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

export interface HandlerInput<R extends RouteSpec> {
  params: ParamsOf<R>;
  query: QueryOf<R>;
  body: BodyOf<R>;
  principal: PrincipalFor<R>;
  deps: Deps;
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

export type RouteHandler<R extends RouteSpec> = (input: HandlerInput<R>) => Promise<Reply>;

/** The implementations a function group must provide: one per route of the group, no more, no less. */
export type GroupHandlers<T extends RouteTable, G extends FunctionGroup> = {
  [K in keyof T as T[K]["group"] extends G ? K : never]: RouteHandler<T[K]>;
};

/**
 * Builds a function group's Lambda handler: the shared middy chain, then the route's implementation.
 * `routes` is the whole table (shared/api): a route of another group is refused, and the system function,
 * API Gateway's $default route, answers 405 with the methods a known path allows.
 * The local gateway calls exactly this handler with the same event shape.
 */
export function createHttpHandler<T extends RouteTable, G extends FunctionGroup>(
  routes: T,
  group: G,
  handlers: GroupHandlers<T, G>,
) {
  const table = handlers as unknown as Record<string, RouteHandler<RouteSpec>>;
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
    } as HandlerInput<RouteSpec>);
    return reply.raw ?? jsonResult(reply.status, reply.body, reply.headers);
  };

  return (
    middy<APIGatewayProxyEventV2, HttpResult, Error, SvcContext>()
      // Adds function name, cold start and request id to every log line; never logs the event (keys, data).
      .use(injectLambdaContext(logger, { logEvent: false, resetKeys: true }))
      .use(requestContext())
      .use(errorHandler())
      .use(routeAndValidate(listRoutes(routes), group))
      .use(authenticateAndAuthorize())
      .use(rateLimit())
      .use(idempotency())
      .handler(dispatch) as unknown as (
      event: APIGatewayProxyEventV2,
      context: Context,
    ) => Promise<HttpResult>
  );
}
