import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import type middy from "@middy/core";

/**
 * The process's one X-Ray tracer. It traces only inside Lambda with active tracing (Powertools turns it off
 * outside a Lambda execution environment and when POWERTOOLS_TRACE_ENABLED=false), so the local gateway and
 * the tests never look for an X-Ray daemon. What it records: one segment per invocation and one subsegment per
 * AWS SDK call (service, operation, table or function name, status, retries). Never a request or response
 * body, header, key or token value: no annotation or metadata is added, responses are not captured (they hold
 * card data) and outbound HTTP (proxy and callback destinations, whose URLs are the tenant's) is not patched.
 */
export const tracer = new Tracer({ serviceName: "svc-vault", captureHTTPsRequests: false });

/** An AWS SDK v3 client whose calls are X-Ray subsegments when tracing is on (the same client when off). */
export function traced<Client>(client: Client): Client {
  return tracer.captureAWSv3Client(client);
}

/**
 * The handler's segment (cold start, function name, errors that escape the chain), for the first `.use` of
 * every middy chain; never the response (it holds token data). Where tracing is off, no middleware at all
 * (an empty list: middy refuses an empty middleware object).
 */
export function handlerTracing(): middy.MiddlewareObj[] {
  return tracer.isTracingEnabled() ? [captureLambdaHandler(tracer, { captureResponse: false })] : [];
}
