import type { Tracer } from "@aws-lambda-powertools/tracer";
import type middy from "@middy/core";

/**
 * Whether this process may trace: inside a Lambda execution environment, unless POWERTOOLS_TRACE_ENABLED says
 * false (the Tracer then applies its own further checks: SAM CLI, Amplify mock).
 *
 * Why the Tracer is not even loaded elsewhere: loading it loads aws-xray-sdk-core, whose cls-hooked context
 * installs an async hook with destroy tracking on every promise of the process. In the local service that
 * cost 0.5 ms of CPU per proxied request (a quarter of the service's work, measured by the bench), for tracing
 * that is off there anyway.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  const inLambda = (env.AWS_EXECUTION_ENV ?? "") !== "";
  const switchedOff = ["false", "0", "n", "no", "off"].includes(
    (env.POWERTOOLS_TRACE_ENABLED ?? "").trim().toLowerCase(),
  );
  return inLambda && !switchedOff;
}

/**
 * The process's one X-Ray tracer, or none where tracing cannot happen (see tracingWanted). What it records:
 * one segment per invocation and one subsegment per AWS SDK call (service, operation, table or function name,
 * status, retries). Never a request or response body, header, key or token value: no annotation or metadata is
 * added, responses are not captured (they hold card data) and outbound HTTP (proxy and callback destinations,
 * whose URLs are the tenant's) is not patched.
 *
 * A dynamic import with a literal path: esbuild still bundles the Tracer into every function (and initializes
 * it only here), and local mode and the tests never run aws-xray-sdk-core's module code.
 */
const tracer: Tracer | undefined = tracingWanted()
  ? new (await import("@aws-lambda-powertools/tracer")).Tracer({
      serviceName: "svc-vault",
      captureHTTPsRequests: false,
    })
  : undefined;
const captureLambdaHandler =
  tracer?.isTracingEnabled() === true
    ? (await import("@aws-lambda-powertools/tracer/middleware")).captureLambdaHandler
    : undefined;

/** Whether this process traces (false in local mode, in tests and where tracing is switched off). */
const isTracing = (): boolean => tracer?.isTracingEnabled() === true;

/** An AWS SDK v3 client whose calls are X-Ray subsegments when tracing is on (the same client when off). */
export function traced<Client>(client: Client): Client {
  return tracer && isTracing() ? tracer.captureAWSv3Client(client) : client;
}

/**
 * The handler's segment (cold start, function name, errors that escape the chain), for the first `.use` of
 * every middy chain; never the response (it holds token data). Where tracing is off, no middleware at all
 * (an empty list: middy refuses an empty middleware object).
 */
export function handlerTracing(): middy.MiddlewareObj[] {
  return tracer && captureLambdaHandler ? [captureLambdaHandler(tracer, { captureResponse: false })] : [];
}
