import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { Deps } from "#shared/container.ts";
import { invokeProxy, ProxyError } from "#shared/domain/proxies/invoke.ts";
import { createHttpHandler, type Reply } from "#shared/http/lambda.ts";
import { internalProblem, problemFromError } from "#shared/http/problem.ts";
import { header } from "#shared/http/request-state.ts";
import { logger } from "#shared/logger.ts";

const PROXY_KEY_PARAMETER = "svc-proxy-key";

/** The query as forwarded: everything but the proxy key parameter, in its original order and encoding. */
function forwardedQuery(raw: string): { rawQuery: string; proxyKey?: string } {
  let proxyKey: string | undefined;
  const kept = raw.split("&").filter((pair) => {
    if (pair === "") return false;
    const name = decodeURIComponent(pair.split("=")[0] ?? "").toLowerCase();
    if (name !== PROXY_KEY_PARAMETER) return true;
    proxyKey ??= decodeURIComponent(pair.slice(pair.indexOf("=") + 1).replace(/\+/g, " "));
    return false;
  });
  return { rawQuery: kept.join("&"), ...(proxyKey !== undefined ? { proxyKey } : {}) };
}

/**
 * Set on every /proxy answer, replacing whatever the destination sent under those names: the answer is served
 * from the vault's own origin, so a destination (or a tenant who controls one) answering text/html with a
 * script must not get it run there, nor have a browser sniff a harmless-looking type into HTML. `sandbox`
 * makes a browser render the answer in a unique origin with scripts, forms and plugins disabled.
 */
export const PROXY_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "sandbox",
};

/** `headers` without any header named in PROXY_RESPONSE_HEADERS (in any case), then those set. */
function withProxyResponseHeaders(headers: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!Object.hasOwn(PROXY_RESPONSE_HEADERS, name.toLowerCase())) result[name] = value;
  return { ...result, ...PROXY_RESPONSE_HEADERS };
}

function proxyErrorReply(status: number, body: unknown): Reply {
  return {
    status,
    raw: {
      statusCode: status,
      headers: withProxyResponseHeaders({ "content-type": "application/json" }),
      body: JSON.stringify({ proxy_error: body }),
    },
  };
}

async function invoke({
  deps,
  event,
  requestId,
}: {
  deps: Deps;
  event: APIGatewayProxyEventV2;
  requestId: string;
}): Promise<Reply> {
  const query = forwardedQuery(event.rawQueryString ?? "");
  const suffix = event.rawPath.replace(/^\/proxy/, "");
  try {
    const response = await invokeProxy(deps, {
      proxyKey: header(event, "svc-proxy-key") ?? query.proxyKey,
      apiKey: header(event, "svc-api-key"),
      method: event.requestContext.http.method.toUpperCase(),
      pathSuffix: suffix,
      rawQuery: query.rawQuery,
      headers: Object.fromEntries(
        Object.entries(event.headers ?? {}).filter((e): e is [string, string] => e[1] !== undefined),
      ),
      ...(event.body ? { body: Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8") } : {}),
      selfHosts: [event.headers?.host, event.requestContext.domainName].filter((h): h is string =>
        Boolean(h),
      ),
    });
    const headers: Record<string, string> = {};
    const cookies: string[] = [];
    for (const [name, value] of Object.entries(response.headers)) {
      if (name.toLowerCase() === "set-cookie") cookies.push(...[value].flat());
      else headers[name] = [value].flat().join(", ");
    }
    // Always base64: the destination's bytes pass through unchanged, text or binary.
    return {
      status: response.status,
      raw: {
        statusCode: response.status,
        headers: withProxyResponseHeaders(headers),
        ...(cookies.length ? { cookies } : {}),
        body: response.body.toString("base64"),
        isBase64Encoded: true,
      },
    };
  } catch (error) {
    if (error instanceof ProxyError) return proxyErrorReply(error.status, problemFromError(error, requestId));
    logger.error("Proxy invocation failed", {
      request_id: requestId,
      error_name: error instanceof Error ? error.name : typeof error,
    });
    return proxyErrorReply(500, internalProblem(requestId));
  }
}

/** /proxy and /proxy/* for GET, POST, PUT, PATCH and DELETE: one implementation. */
export const handler = createHttpHandler("proxy", {
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
});
