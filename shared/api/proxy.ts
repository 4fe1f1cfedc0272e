import * as z from "zod";
import type { HttpMethod } from "#shared/http/route.ts";
import { routeGroup } from "./group.ts";

/** Largest proxied request: Lambda's 6 MB payload, with room for the event around it. */
const PROXY_MAX_BODY_BYTES = 5.5 * 1024 * 1024;

/** Proxy invocation: raw bodies, its own authentication (proxy key, SVC-API-KEY when required), no idempotency. */
function invokeRoute<const M extends HttpMethod, const P extends string>(method: M, path: P) {
  return {
    method,
    path,
    auth: "none",
    credential: "proxy-key",
    ...(method === "GET" ? {} : { rawBody: true }),
    summary: `Invoke a pre-configured proxy (${method}); key in SVC-PROXY-KEY or svc-proxy-key`,
    idempotent: false,
    maxBodyBytes: PROXY_MAX_BODY_BYTES,
    ...(path.includes("{") ? { params: z.object({ proxy: z.string() }) } : {}),
    responses: {
      200: { description: "The destination's raw response, with SVC-PROXY-DESTINATION-STATUS" },
      400: { description: "proxy_error: unknown token or invalid expression" },
      401: { description: "proxy_error: missing or invalid proxy key or SVC-API-KEY" },
      403: { description: "proxy_error: token:use missing, or a refused destination" },
    },
  } as const;
}

/** /proxy and /proxy/{proxy+} for every method: one implementation (functions/proxy). */
export const proxyRoutes = routeGroup("proxy", {
  invokeProxyGet: invokeRoute("GET", "/proxy"),
  invokeProxyGetPath: invokeRoute("GET", "/proxy/{proxy+}"),
  invokeProxyPost: invokeRoute("POST", "/proxy"),
  invokeProxyPostPath: invokeRoute("POST", "/proxy/{proxy+}"),
  invokeProxyPut: invokeRoute("PUT", "/proxy"),
  invokeProxyPutPath: invokeRoute("PUT", "/proxy/{proxy+}"),
  invokeProxyPatch: invokeRoute("PATCH", "/proxy"),
  invokeProxyPatchPath: invokeRoute("PATCH", "/proxy/{proxy+}"),
  invokeProxyDelete: invokeRoute("DELETE", "/proxy"),
  invokeProxyDeletePath: invokeRoute("DELETE", "/proxy/{proxy+}"),
});
