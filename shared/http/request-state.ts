import type middy from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { answerFits } from "#shared/domain/answer-size.ts";
import type { Principal } from "#shared/domain/entities.ts";
import { answerTooLarge } from "#shared/domain/errors.ts";
import type { IdempotencyClaimRef } from "#shared/domain/idempotency-scope.ts";
import type { ApiRoute } from "./route.ts";

export type MatchedRoute = ApiRoute;

/** What the middleware chain learns about a request, handed from one middleware to the next. */
export interface RequestState {
  requestId: string;
  startedAt: number;
  route?: MatchedRoute;
  /** The route's path parameters as matched, validated into `params` after authentication. */
  pathParameters?: Record<string, string | undefined>;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  principal?: Principal;
  /**
   * Whose budgets the request draws from (rate limit, expression render time): `tenant#<id>` for a key's or a
   * proxy invocation's tenant, else the caller's address bucket. Unset for root and system routes.
   */
  bucket?: string;
  /** The idempotency claim this request holds (its record's scope and key, and which claim of the key). */
  idempotency?: IdempotencyClaimRef;
  /** The answer as its idempotency record keeps it, when it presented tokens (replay-body.ts), as JSON. */
  replayBody?: string;
  /** A cross-origin request's Origin, once its key's application allows it (middleware/cors.ts). */
  corsOrigin?: string;
  /** When the request began on the composition's clock (middleware/request-metrics.ts: its latency). */
  clockStartedAt?: number;
  /** The group's adapters scoped to this request (lambda.ts): made once, shared by the handler and replays. */
  scopedDeps?: unknown;
}

export type SvcContext = Context & { svc: RequestState };
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type SvcRequest = middy.Request<APIGatewayProxyEventV2, HttpResult, Error, SvcContext>;
export type SvcMiddleware = middy.MiddlewareObj<APIGatewayProxyEventV2, HttpResult, Error, SvcContext>;

export function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  // API Gateway HTTP APIs lower-case header names; the local gateway does the same.
  return event.headers?.[name.toLowerCase()];
}

export function jsonResult(status: number, body: unknown, headers?: Record<string, string>): HttpResult {
  if (status === 204 || body === undefined) return { statusCode: status, headers: headers ?? {} };
  const text = JSON.stringify(body);
  // Where every JSON answer passes (problems: the error handler): one a Lambda result could not carry is a 500
  // problem naming why, never a failed invocation (API Gateway's bare 500). Lists and masks keep well below it.
  if (!answerFits(text)) throw answerTooLarge();
  return {
    statusCode: status,
    headers: headers
      ? { "content-type": "application/json", ...headers }
      : { "content-type": "application/json" },
    body: text,
  };
}
