import { deps } from "#shared/container.ts";
import { HttpError } from "../errors.ts";
import type { SvcMiddleware } from "../request-state.ts";

export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(
    429,
    "rate-limited",
    "Too Many Requests",
    `The request rate limit is exhausted; retry in ${retryAfterSeconds} s.`,
    undefined,
    { "retry-after": String(retryAfterSeconds) },
  );

/**
 * Counts every request against its bucket, after authentication: a key's tenant (application and session
 * keys alike), or for routes without a key the caller's source address. Root-key requests (the operator)
 * are not limited. Over the limit: 429 problem+json with Retry-After.
 */
export function rateLimit(): SvcMiddleware {
  return {
    before: async (request) => {
      const limiter = deps().rateLimiter;
      const state = request.context.svc;
      if (!limiter || !state.route || state.route.auth === "root") return;
      const principal = state.principal;
      const bucket =
        principal && principal.kind !== "root"
          ? `tenant#${principal.tenantId}`
          : `ip#${request.event.requestContext.http.sourceIp}`;
      const admission = await limiter.admit(bucket);
      if (!admission.allowed) throw tooManyRequests(admission.retryAfterSeconds);
    },
  };
}
