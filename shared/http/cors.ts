import type { ApiRoute } from "./route.ts";

/** Request headers a browser page may send on the CORS routes (SVC-API-KEY and the optional ones of writes). */
export const CORS_ALLOWED_HEADERS = "content-type, svc-api-key, svc-idempotency-key, svc-transaction-id";
/** Answer headers a page may read besides the safelisted ones. */
export const CORS_EXPOSED_HEADERS = "svc-request-id, retry-after";
/** How long a browser may reuse a preflight's answer (seconds). */
export const CORS_MAX_AGE_SECONDS = 600;

/** One preflight route per path that has a CORS route: what API Gateway routes to the system function. */
export interface PreflightRoute {
  method: "OPTIONS";
  path: string;
  /** The methods of the path browsers may call. */
  methods: string[];
}

/** The preflight routes the route table implies: every path with a `cors` route, once. */
export function preflightRoutes(routes: readonly ApiRoute[]): PreflightRoute[] {
  const byPath = new Map<string, string[]>();
  for (const route of routes) {
    if (!route.cors) continue;
    byPath.set(route.path, [...(byPath.get(route.path) ?? []), route.method]);
  }
  return [...byPath].map(([path, methods]) => ({ method: "OPTIONS", path, methods }));
}
