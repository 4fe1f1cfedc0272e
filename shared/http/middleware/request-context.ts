import { randomUUID } from "node:crypto";
import { logger } from "#shared/logger.ts";
import { writeAccessLine } from "#shared/observability/access-log.ts";
import type { SvcMiddleware } from "../request-state.ts";
import { withSecurityHeaders } from "../security-headers.ts";

/**
 * Gives the request its id (API Gateway's when there is one), echoes it back with the security headers on every
 * answer (errors and proxied answers included), and writes its access line (observability/access-log.ts).
 */
export function requestContext(): SvcMiddleware {
  const finish: NonNullable<SvcMiddleware["after"]> = (request) => {
    const state = request.context.svc;
    if (!state || !request.response) return;
    // Only a successful answer of a route that owns its policy keeps it; its errors get `sandbox` as any.
    const headers = withSecurityHeaders(request.response.headers, {
      ownPolicy: state.route?.ownContentSecurityPolicy === true && request.response.statusCode === 200,
    });
    headers["svc-request-id"] = state.requestId;
    request.response.headers = headers;
    writeAccessLine(request.context, {
      request_id: state.requestId,
      route: state.route ? `${state.route.method} ${state.route.path}` : request.event.routeKey,
      status: request.response.statusCode,
      duration_ms: Date.now() - state.startedAt,
      tenant_id: state.principal?.kind === "application" ? state.principal.tenantId : undefined,
    });
  };
  return {
    before: (request) => {
      // Function name, cold start and request id on every line the invocation logs (Powertools'
      // injectLambdaContext does this and more per invocation: sampling, key resets, none of which is used here).
      logger.addContext(request.context);
      request.context.svc = {
        requestId: request.event.requestContext?.requestId || randomUUID(),
        startedAt: Date.now(),
        params: {},
        query: {},
        body: undefined,
      };
    },
    after: finish,
    onError: finish,
  };
}
