import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { Routes } from "#shared/api/index.ts";
import { proxyRoutes } from "#shared/api/proxy.ts";
import { composeCore } from "#shared/composition/core.ts";
import { egress } from "#shared/composition/egress.ts";
import { sandbox } from "#shared/composition/sandbox.ts";
import { proxyStore } from "#shared/composition/stores.ts";
import { tokenDomain } from "#shared/composition/token-domain.ts";
import { type Config, config } from "#shared/config.ts";
import { invokeProxy, type ProxyInvokeDeps } from "#shared/domain/proxies/invoke.ts";
import { ProxyError } from "#shared/domain/proxies/proxy-error.ts";
import { isForbiddenHeaderName, nullObject } from "#shared/domain/safe-keys.ts";
import { createHttpHandler, type GroupHandlers, type Reply } from "#shared/http/lambda.ts";
import { isStoreOutage } from "#shared/http/outage.ts";
import { httpErrorOf, internalProblem, problemFromError } from "#shared/http/problem.ts";
import { header } from "#shared/http/request-state.ts";
import { API_FUNCTION_TIMEOUT_SECONDS } from "#shared/http/time-limits.ts";
import { logger } from "#shared/logger.ts";

const PROXY_KEY_PARAMETER = "svc-proxy-key";

const malformedQuery = () =>
  new ProxyError("invalid", "The query string holds malformed percent-encoding.", { code: "invalid-query" });

function decodeQueryPart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw malformedQuery();
  }
}

/**
 * The query as forwarded: everything but the proxy key parameter, in its original order and encoding.
 * A name (or the proxy key's value) that is not valid percent-encoding is the caller's mistake: a 400 ProxyError.
 */
function forwardedQuery(raw: string): { rawQuery: string; proxyKey?: string } {
  let proxyKey: string | undefined;
  const kept = raw.split("&").filter((pair) => {
    if (pair === "") return false;
    const name = decodeQueryPart(pair.split("=")[0] ?? "").toLowerCase();
    if (name !== PROXY_KEY_PARAMETER) return true;
    proxyKey ??= decodeQueryPart(pair.slice(pair.indexOf("=") + 1).replace(/\+/g, " "));
    return false;
  });
  return { rawQuery: kept.join("&"), ...(proxyKey !== undefined ? { proxyKey } : {}) };
}

function proxyErrorReply(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return {
    status,
    raw: {
      statusCode: status,
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ proxy_error: body }),
    },
  };
}

async function invoke({
  deps,
  event,
  requestId,
}: {
  deps: ProxyInvokeDeps;
  event: APIGatewayProxyEventV2;
  requestId: string;
}): Promise<Reply> {
  const suffix = event.rawPath.replace(/^\/proxy/, "");
  try {
    const query = forwardedQuery(event.rawQueryString ?? "");
    const response = await invokeProxy(deps, {
      proxyKey: header(event, "svc-proxy-key") ?? query.proxyKey,
      apiKey: header(event, "svc-api-key"),
      method: event.requestContext.http.method.toUpperCase(),
      pathSuffix: suffix,
      rawQuery: query.rawQuery,
      headers: Object.fromEntries(
        Object.entries(event.headers ?? {}).filter(
          (e): e is [string, string] => e[1] !== undefined && !isForbiddenHeaderName(e[0]),
        ),
      ),
      ...(event.body ? { body: Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8") } : {}),
      selfHosts: [event.headers?.host, event.requestContext.domainName].filter((h): h is string =>
        Boolean(h),
      ),
      // Wall time, not the service clock (a test clock may be moved): API Gateway counts from the request's
      // arrival, and the function is stopped a second before it gives up.
      timeLeftMs: () => event.requestContext.timeEpoch + API_FUNCTION_TIMEOUT_SECONDS * 1000 - Date.now(),
    });
    // Names come from the destination or tenant code: a null-prototype map, and never `__proto__`. No
    // Set-Cookie reaches here (responseHeaders in shared/domain/proxies/headers.ts), so repeated fields join as one.
    const headers = nullObject<string>();
    for (const [name, value] of Object.entries(response.headers))
      if (!isForbiddenHeaderName(name)) headers[name] = [value].flat().join(", ");
    // Always base64: the destination's bytes pass through unchanged, text or binary.
    return {
      status: response.status,
      raw: {
        statusCode: response.status,
        // X-Content-Type-Options and CSP are replaced for every answer (shared/http/security-headers.ts).
        headers,
        body: response.body.toString("base64"),
        isBase64Encoded: true,
      },
    };
  } catch (error) {
    // A proxy's own failures, and the store being unreachable (503 + Retry-After: the caller may retry).
    const known = error instanceof ProxyError || isStoreOutage(error) ? httpErrorOf(error) : undefined;
    if (known) return proxyErrorReply(known.status, problemFromError(known, requestId), known.headers);
    logger.error("Proxy invocation failed", {
      request_id: requestId,
      error_name: error instanceof Error ? error.name : typeof error,
    });
    return proxyErrorReply(500, internalProblem(requestId));
  }
}

/** /proxy and /proxy/* for GET, POST, PUT, PATCH and DELETE: one implementation. */
/** The adapters the proxy routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...tokenDomain(core), ...proxyStore(core), ...sandbox(core), ...egress() };
}
export type ProxyGroupDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "proxy", ProxyGroupDeps> = {
  invokeProxyGet: invoke,
  invokeProxyGetPath: invoke,
  invokeProxyPost: invoke,
  invokeProxyPostPath: invoke,
  invokeProxyPut: invoke,
  invokeProxyPutPath: invoke,
  invokeProxyPatch: invoke,
  invokeProxyPatchPath: invoke,
  invokeProxyDelete: invoke,
  invokeProxyDeletePath: invoke,
};

export const handler = createHttpHandler(proxyRoutes, "proxy", routes, () => compose(config()));
