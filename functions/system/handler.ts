import { routeList, routes } from "#shared/api/index.ts";
import { notFound } from "#shared/domain/errors.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import { openApiDocument } from "#shared/openapi.ts";

/** Health, the OpenAPI document, the local test clock, and API Gateway's $default route (unknown paths). */
export const handler = createHttpHandler(routes, "system", {
  healthz: async () => ({ status: 200, body: { status: "ok" } }),
  openapi: async () => ({ status: 200, body: openApiDocument(routeList) }),
  advanceTestClock: async ({ deps, body }) => {
    // The route exists everywhere but only answers where SVC_TEST_CLOCK=1 (local mode only).
    if (!deps.testClock) throw notFound("The route POST /_test/clock");
    const now = deps.testClock.advance(body.advance_seconds).toISOString();
    // Expiry follows the clock at once: the sweep runs now rather than at its next tick.
    const sweep = await sweepExpired(deps);
    return { status: 200, body: { now, sweep } };
  },
});
