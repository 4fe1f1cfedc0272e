import middy from "@middy/core";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import type { Authenticator } from "#shared/domain/authentication.ts";
import type { Principal, TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict } from "#shared/domain/errors.ts";
import {
  type DataRead,
  type PresentedTokenRef,
  presentedTokenOf,
  runWithIdempotencyClaim,
} from "#shared/domain/idempotency-scope.ts";
import type { ExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { flushMetrics } from "#shared/observability/metrics.ts";
import type { FlushableMetrics } from "#shared/ports/metrics.ts";
import type { RecordedEffect } from "#shared/ports/stores.ts";
import { handlerTracing } from "#shared/tracer.ts";
import { authenticateAndAuthorize } from "./middleware/authenticate.ts";
import { composeMiddlewares } from "./middleware/compose.ts";
import { corsAnswers, corsOriginCheck } from "./middleware/cors.ts";
import { errorHandler } from "./middleware/error-handler.ts";
import { type IdempotencyPorts, type IdempotencyReplays, idempotency } from "./middleware/idempotency.ts";
import { type RateLimitPorts, rateLimit } from "./middleware/rate-limit.ts";
import { requestContext } from "./middleware/request-context.ts";
import { type RequestMetricsPorts, requestMetrics } from "./middleware/request-metrics.ts";
import "./safe-headers.ts"; // a `__proto__` header line never crashes the process (see there)
import { matchRoute, validateRequest } from "./middleware/route-and-validate.ts";
import { toReplayBody } from "./replay-body.ts";
import { type HttpResult, header, jsonResult, type RequestState, type SvcContext } from "./request-state.ts";
import {
  type BodyOf,
  type FunctionGroup,
  GROUP_DATA_KEYS,
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
  IdempotencyPorts &
  RequestMetricsPorts & {
    authenticator: Pick<Authenticator, "authenticate"> & Partial<Pick<Authenticator, "cached">>;
    /** The composition's metrics, written once per invocation (shared/observability/metrics.ts). */
    metrics: FlushableMetrics;
    /** The token domain's engine, where the group has one: scoped to each request's budget (below). */
    expressions?: ExpressionEngine;
  };

/**
 * The group's adapters for one request: the expression engine scoped to the request's one render budget and
 * its tenant's share (render-budget.ts). Every route's renders pass here, whatever domain code they reach
 * (reads, lists, writes, proxies, reactors, code's `svc` calls, replayed answers).
 */
function forRequest<D extends HttpPorts>(deps: D, bucket: string | undefined): D {
  if (!deps.expressions) return deps;
  return { ...deps, expressions: deps.expressions.forRequest(bucket ?? "operator") };
}

export interface HandlerInput<R extends RouteSpec, D = unknown> {
  params: ParamsOf<R>;
  query: QueryOf<R>;
  body: BodyOf<R>;
  principal: PrincipalFor<R>;
  /** The group's composed adapters (its functions/<group>/handler.ts composition). */
  deps: D;
  requestId: string;
  event: APIGatewayProxyEventV2;
  /**
   * SVC-TRANSACTION-ID, on a `transactional` route only (the flag the OpenAPI document lists the header by):
   * elsewhere the header is not read.
   */
  transactionId: R["transactional"] extends true ? string | undefined : undefined;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A complete result (proxy responses: raw, possibly binary bodies), sent as it is. */
  raw?: HttpResult;
}

export type RouteHandler<R extends RouteSpec, D = unknown> = (input: HandlerInput<R, D>) => Promise<Reply>;

/**
 * A replay of a request that took effect but never completed (it died or failed after its write): the answer
 * again, built from the effects its write transactions recorded (the audit entries: entity type, id, operation).
 * It runs nothing again and writes no second create entry.
 */
export type EffectReplay<R extends RouteSpec, D = unknown> = (
  input: HandlerInput<R, D> & { effects: RecordedEffect[] },
) => Promise<Reply>;

/** How a group answers idempotent replays beyond the stored result (middleware/idempotency.ts). */
export interface GroupReplays<T extends RouteTable, G extends FunctionGroup, D> {
  /** Presents a token an answer presented again, for the same caller (groups whose answers present tokens). */
  presentToken?: (deps: D, principal: TenantPrincipal, ref: PresentedTokenRef) => Promise<unknown>;
  /** Throws unless a token an answer's data came from is alive and unchanged (groups that detokenize). */
  checkRead?: (deps: D, principal: TenantPrincipal, read: DataRead) => Promise<void>;
  /** Per route: the answer to a request whose effect was recorded but whose answer was lost. */
  effects?: {
    [K in keyof T as T[K]["group"] extends G ? K : never]?: EffectReplay<T[K], D>;
  };
}

const ANSWER_LOST =
  "This request took effect but its answer was lost; it is not run again. Read what it created or changed.";

/**
 * The usual effect replay: the entity of `entityType` the request created or updated (the first its transactions
 * recorded), answered as `read` presents it, with `status`. Without such an effect: 409, nothing runs again.
 */
export function replayAs<R extends RouteSpec, D>(
  entityType: string | readonly string[],
  operation: "create" | "update",
  status: number,
  read: (input: HandlerInput<R, D>, id: string, effect: RecordedEffect) => Promise<unknown>,
): EffectReplay<R, D> {
  const types = [entityType].flat();
  return async (input) => {
    const effect = input.effects.find((e) => types.includes(e.entity_type) && e.operation === operation);
    if (!effect) throw conflict(ANSWER_LOST);
    return { status, body: await read(input, effect.entity_id, effect) };
  };
}

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
  replays: GroupReplays<T, G, D> = {},
) {
  let composed: D | undefined;
  const deps = (): D => {
    composed ??= compose();
    return composed;
  };
  // One request's adapters, built once: the handler and any replay of its answer share one render budget.
  const depsFor = (state: RequestState): D => {
    state.scopedDeps ??= forRequest(deps(), state.bucket);
    return state.scopedDeps as D;
  };
  const table = handlers as unknown as Record<string, RouteHandler<RouteSpec, D>>;
  const inputOf = (event: APIGatewayProxyEventV2, state: RequestState) =>
    ({
      params: state.params,
      query: state.query,
      body: state.body,
      principal: state.principal,
      deps: depsFor(state),
      requestId: state.requestId,
      event,
      transactionId: state.route?.transactional ? header(event, "svc-transaction-id") : undefined,
    }) as HandlerInput<RouteSpec, D>;
  const dispatch = async (event: APIGatewayProxyEventV2, context: SvcContext): Promise<HttpResult> => {
    const state = context.svc;
    const route = state.route;
    const implementation = route ? table[route.operationId] : undefined;
    if (!route || !implementation)
      throw new Error(`No implementation for ${route?.operationId ?? event.routeKey}`);
    const claim = state.idempotency;
    if (!claim) {
      const reply = await implementation(inputOf(event, state));
      return reply.raw ?? jsonResult(reply.status, reply.body, reply.headers);
    }
    // Within its claim: every write records its effect with it, every token presented is noted (and kept by
    // reference, not data, in the stored answer).
    return runWithIdempotencyClaim(claim, async () => {
      const reply = await implementation(inputOf(event, state));
      if (!reply.raw) {
        const kept = toReplayBody(reply.body, presentedTokenOf);
        const reads = claim.reads ?? [];
        if (kept.tokens.length > 0 || reads.length > 0)
          state.replayBody = JSON.stringify({ ...kept, ...(reads.length > 0 ? { reads } : {}) });
      }
      return reply.raw ?? jsonResult(reply.status, reply.body, reply.headers);
    });
  };
  const effectReplays = (replays.effects ?? {}) as Record<string, EffectReplay<RouteSpec, D> | undefined>;
  const idempotencyReplays: IdempotencyReplays = {
    presentToken: async (request, ref) => {
      const principal = request.context.svc.principal;
      // Fail closed: a group that presents tokens provides this; no other can have stored a reference.
      if (!replays.presentToken || !principal || principal.kind === "root")
        throw new Error("A stored answer names a token this function cannot present.");
      return replays.presentToken(depsFor(request.context.svc), principal, ref);
    },
    checkRead: async (request, read) => {
      const principal = request.context.svc.principal;
      if (!replays.checkRead || !principal || principal.kind === "root")
        throw new Error("A stored answer names token data this function cannot check.");
      return replays.checkRead(depsFor(request.context.svc), principal, read);
    },
    replayEffect: async (request, effects) => {
      const state = request.context.svc;
      const replay = state.route ? effectReplays[state.route.operationId] : undefined;
      if (!replay) throw conflict(ANSWER_LOST);
      const reply = await replay({ ...inputOf(request.event, state), effects });
      return reply.raw ?? jsonResult(reply.status, reply.body, reply.headers);
    },
  };

  return (
    middy<APIGatewayProxyEventV2, HttpResult, Error, SvcContext>()
      // X-Ray segment of the invocation in Lambda (never the response: it holds token data); outermost, so
      // errors reach it only as the errorHandler's answers.
      .use(handlerTracing())
      // The chain, in middy's order and with its rules, as one middleware (compose.ts: middy awaits each one).
      .use(
        composeMiddlewares([
          // Outermost but tracing: what the whole chain recorded is written once, when the invocation ends.
          flushMetrics(() => composed?.metrics),
          requestContext(),
          // Requests, 4xx/5xx and latency by route, for every answer (errors as the errorHandler answered them).
          requestMetrics(deps),
          // Preflights, and CORS headers on the answers of routes browsers may call (errors included).
          corsAnswers(listRoutes(routes)),
          errorHandler(),
          matchRoute(listRoutes(routes), group),
          authenticateAndAuthorize(() => deps().authenticator),
          // Before anything the route does (rate budget, idempotent replays): an unlisted Origin is refused.
          corsOriginCheck(),
          // Before the body is read: a refused request costs a counter in memory, never a parse of its up to 1 MiB
          // of JSON (validated first, a tenant over its budget, or anyone with its public key, still had every body
          // parsed and checked on the process every tenant shares: availability review, 28 Nov 2026).
          rateLimit(deps),
          // After both: a caller without a valid key, or from an unlisted origin, learns nothing of what the route
          // accepts.
          validateRequest(),
          // Control-plane writes: the key again, from the store (what they grant or bind is judged on its grant now).
          authenticateAndAuthorize(() => deps().authenticator, { fresh: true }),
          idempotency(deps, idempotencyReplays, GROUP_DATA_KEYS[group] === "answers" ? "answers" : "data"),
        ]),
      )
      .handler(dispatch) as unknown as (
      event: APIGatewayProxyEventV2,
      context: Context,
    ) => Promise<HttpResult>
  );
}
