import { mayEverHold } from "#shared/domain/access-rules.ts";
import { configuredApplication } from "#shared/domain/acting-application.ts";
import { actorOf } from "#shared/domain/audit-entry.ts";
import type { Authenticator } from "#shared/domain/authentication.ts";
import type { DeletedTenants } from "#shared/domain/deleted-tenants.ts";
import {
  type ErrorKind,
  forbidden,
  payloadTooLarge,
  unauthorized,
  validationError,
} from "#shared/domain/errors.ts";
import { jsonTextDepth, MAX_JSON_DEPTH } from "#shared/domain/json-guard.ts";
import { isForbiddenHeaderName, nullObject } from "#shared/domain/safe-keys.ts";
import { isHandedOut } from "#shared/domain/sessions.ts";
import { accessOf } from "#shared/domain/tokens/access.ts";
import { createDetokenizer, findReferences, type UseAudit } from "#shared/domain/tokens/detokenize.ts";
import { hashKey } from "#shared/ids.ts";
import { timedDestination } from "#shared/observability/destination-metrics.ts";
import { type Egress, EgressError, type EgressErrorCode, FORWARD_TIMEOUT_MS } from "#shared/ports/egress.ts";
import type { ProxyStore } from "#shared/ports/proxy-store.ts";
import { detokenizeAudited } from "./audit-before-forward.ts";
import { headersFromCode, proxyOptionHeaders, responseHeaders, transformVisibleHeaders } from "./headers.ts";
import { detokenizeJsonInPlace } from "./in-place.ts";
import { proxyConfiguration, type StoredProxy } from "./proxy.ts";
import { asProxyFailure, memberView, ProxyError } from "./proxy-error.ts";
import {
  encodeBody,
  runTransform,
  TRANSFORM_PAYLOAD_LIMIT,
  TRANSFORM_TIMEOUT_MS,
  type TransformDeps,
} from "./transform.ts";

export interface ProxyInvokeDeps extends TransformDeps {
  proxies: ProxyStore;
  /** A deleted tenant's proxy keys answer 401 like its API keys (deleted-tenants.ts). */
  deletedTenants: Pick<DeletedTenants, "isDeleted">;
  authenticator: Authenticator;
  egress: Egress;
  config: { proxyAllowPrivate: boolean };
}

export interface InvokeRequest {
  proxyKey?: string;
  apiKey?: string;
  method: string;
  pathSuffix: string;
  /** Raw query without `?`, the svc-proxy-key parameter already removed. */
  rawQuery: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** host[:port] names of this service: a proxy never calls itself. */
  selfHosts: string[];
  /** What is left of the hosting's time for this request (ms), read when asked: the function's budget. */
  timeLeftMs?: () => number;
}

/** Time kept after the destination's deadline for the answer (and the response transform, when there is one). */
const ANSWER_MARGIN_MS = 1_000;
/** The least time a destination is given; with less left, the request is not sent. */
const MIN_DESTINATION_MS = 1_000;

/**
 * How long the destination may take: 25 s at most, and never past what is left of the function's time (less
 * the response transform's and the answer's), so a slow destination ends as this proxy's 504 `timeout`, not as
 * the function timing out (a bare gateway 5xx after the request was sent, which reads as "never reached").
 */
function destinationTimeoutMs(proxy: StoredProxy, request: InvokeRequest): number {
  if (!request.timeLeftMs) return FORWARD_TIMEOUT_MS;
  const reserve = ANSWER_MARGIN_MS + (proxy.response_transform ? TRANSFORM_TIMEOUT_MS : 0);
  const left = Math.min(FORWARD_TIMEOUT_MS, request.timeLeftMs() - reserve);
  // Too little left to wait for any answer: nothing is sent (a request sent and then timed out at once would
  // reach the destination all the same, and its 504 would read as "maybe sent").
  if (!(left >= MIN_DESTINATION_MS))
    throw new ProxyError(
      "unavailable",
      "Too little of the request's time is left to call the destination; nothing was sent.",
      {
        code: "not-sent",
        title: "Proxy Error",
      },
    );
  return left;
}

export interface InvokeResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** What a refused or failed forward is: the caller's (a refused destination) or the destination's. */
const KIND_OF_EGRESS_ERROR: Record<EgressErrorCode, ErrorKind> = {
  invalid_destination: "invalid",
  forbidden_destination: "forbidden",
  timeout: "timed-out",
  unreachable: "upstream-failed",
  response_too_large: "upstream-failed",
};

/**
 * The largest answer a proxy gives (the destination's, or its response transform's): it is answered base64-encoded
 * in the function's result, which Lambda caps at 6 MB (6,291,456 bytes) with the headers around it. Above about
 * 4.5 MB the invocation failed in AWS (API Gateway's bare 500, no proxy_error, a Lambda error) where the docs
 * promised a 502 from 10 MB, and locally one call held the answer three times over on the shared process
 * (availability review, 28 Nov 2026).
 */
export const PROXY_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

const responseTooLarge = () =>
  new ProxyError("upstream-failed", `The response exceeds ${PROXY_MAX_RESPONSE_BYTES} bytes.`, {
    code: "response-too-large",
    title: "Proxy Error",
  });

const isJson = (headers: Record<string, string>) => /\bjson\b/i.test(headers["content-type"] ?? "");
const isText = (headers: Record<string, string>) =>
  /^(text\/|application\/(x-www-form-urlencoded|xml|.*\+xml))/i.test(headers["content-type"] ?? "");

/** Request header names a transform may set: alphanumerics, hyphens and underscores (spec). */
const HEADER_NAME = /^[A-Za-z0-9_-]+$/;

async function principalOf(deps: ProxyInvokeDeps, proxy: StoredProxy, apiKey: string | undefined) {
  if (proxy.require_auth) {
    const principal = await deps.authenticator.authenticate(apiKey, { rootAllowed: false });
    if (!principal || principal.kind === "root" || principal.tenantId !== proxy.tenant_id)
      throw unauthorized("This proxy requires a valid SVC-API-KEY of its tenant.");
    // Required even when nothing is detokenized (spec).
    const grants =
      principal.kind === "session" ? [principal.session, principal.application] : [principal.application];
    if (!grants.every((g) => mayEverHold(g, "token:use"))) throw forbidden("The key lacks token:use.");
    return principal;
  }
  // Without require_auth, detokenization runs with the proxy's application, if it has one.
  return configuredApplication(deps.authenticator, proxy.tenant_id, proxy.application_id, "proxy", [
    proxy.modified_by ?? proxy.created_by,
  ]);
}

/**
 * What detokenization works on: a JSON body parsed (within the depth limit every JSON body has: detokenization
 * walks it recursively), a text body (or JSON that does not parse) as text, anything else as raw bytes.
 */
function bodyContent(
  request: InvokeRequest,
): { kind: "json"; value: unknown } | { kind: "text"; value: string } | { kind: "raw" } {
  if (!request.body?.length) return { kind: "raw" };
  // Compressed or otherwise encoded: its bytes are not the text they decode to.
  const encoding = (request.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "") return { kind: "raw" };
  if (isJson(request.headers)) {
    const text = request.body.toString("utf8");
    if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
      throw validationError(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return parsed === undefined ? { kind: "text", value: text } : { kind: "json", value: parsed };
  }
  if (isText(request.headers)) return { kind: "text", value: request.body.toString("utf8") };
  return { kind: "raw" };
}

/**
 * One proxied request, as steps: resolve the proxy by its key → authorize the caller → detokenize the body
 * (JSON or text; binary passes unchanged) and audit before anything leaves → request transform → forward →
 * response transform, answered with SVC-PROXY-DESTINATION-STATUS. Every failure before the destination
 * answers is a ProxyError.
 */
export async function invokeProxy(deps: ProxyInvokeDeps, request: InvokeRequest): Promise<InvokeResponse> {
  const proxy = await resolve(deps, request.proxyKey).catch((error: unknown) => {
    throw asProxyFailure(error);
  });
  try {
    const principal = await authorize(deps, proxy, request);
    // Whose budget the transforms' svc calls spend: an open proxy's caller or a browser-held key is handed out.
    const handedOut = !proxy.require_auth || (principal !== undefined && isHandedOut(principal));
    const detokenized = await detokenizeAndAudit(deps, proxy, principal, request);
    const outbound = await transformRequest(deps, proxy, request, detokenized, handedOut);
    const response = await forwardTo(deps, proxy, request, outbound);
    return answer(response.status, await transformResponse(deps, proxy, response, handedOut));
  } catch (error) {
    const failure = asProxyFailure(error);
    throw failure instanceof ProxyError ? await memberView(deps, proxy, request.apiKey, failure) : failure;
  }
}

async function resolve(deps: ProxyInvokeDeps, proxyKey: string | undefined): Promise<StoredProxy> {
  if (!proxyKey) throw unauthorized("A proxy key is required in SVC-PROXY-KEY or svc-proxy-key.");
  const proxy = await deps.proxies.findByKey(hashKey(proxyKey));
  if (!proxy || (await deps.deletedTenants.isDeleted(proxy.tenant_id)))
    throw unauthorized("The proxy key is invalid.");
  return proxy;
}

/** The caller's principal (or the proxy's configured application); a transformed payload is size-checked here. */
async function authorize(deps: ProxyInvokeDeps, proxy: StoredProxy, request: InvokeRequest) {
  const principal = await principalOf(deps, proxy, request.apiKey);
  const hasTransform = Boolean(proxy.request_transform || proxy.response_transform);
  if (hasTransform && (request.body?.length ?? 0) > TRANSFORM_PAYLOAD_LIMIT)
    throw payloadTooLarge(TRANSFORM_PAYLOAD_LIMIT);
  return principal;
}

interface Detokenized {
  /** What a request transform sees as `body`. */
  body: unknown;
  bodyBytes: Buffer | undefined;
}

/** Fail-closed: the token reads and the invocation are logged before anything leaves. */
async function detokenizeAndAudit(
  deps: ProxyInvokeDeps,
  proxy: StoredProxy,
  principal: Awaited<ReturnType<typeof principalOf>>,
  request: InvokeRequest,
): Promise<Detokenized> {
  const access = principal
    ? accessOf(principal)
    : { evaluate: () => undefined, visibility: () => [], revealVisibility: () => [] };
  const content = bodyContent(request);
  const call = {
    tenantId: proxy.tenant_id,
    proxyId: proxy.id,
    actor: principal ? actorOf(principal) : { type: "proxy_key" as const },
    method: request.method,
    tokenIds: content.kind === "raw" ? [] : findReferences(content.value).map((ref) => ref.id),
  };
  return detokenizeAudited(deps, call, async (audit: UseAudit): Promise<Detokenized> => {
    if (content.kind === "raw") return { body: request.body?.toString("utf8"), bodyBytes: request.body };
    // Without an expression the body goes on byte for byte, as the caller sent it.
    if (call.tokenIds.length === 0) return { body: content.value, bodyBytes: request.body };
    const detokenizer = createDetokenizer(deps, proxy.tenant_id, access, audit);
    if (content.kind === "text") {
      const text = await detokenizer.text(content.value);
      return { body: text, bodyBytes: Buffer.from(text, "utf8") };
    }
    // Replaced where the expressions are: every other character as the caller wrote it (in-place.ts).
    const text = await detokenizeJsonInPlace(request.body?.toString("utf8") ?? "", detokenizer);
    return { body: JSON.parse(text), bodyBytes: Buffer.from(text, "utf8") };
  });
}

interface Outbound {
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** Tenant code never sees the service's own headers (API key, proxy key); the proxy options go on aside. */
async function transformRequest(
  deps: ProxyInvokeDeps,
  proxy: StoredProxy,
  request: InvokeRequest,
  detokenized: Detokenized,
  handedOut: boolean,
): Promise<Outbound> {
  const visible = transformVisibleHeaders(request.headers);
  // The response transform reads the body: ask the destination for it uncompressed.
  const { "accept-encoding": _encoding, ...identity } = visible;
  const headers = proxy.response_transform ? identity : visible;
  const options = proxyOptionHeaders(request.headers);
  if (!proxy.request_transform) return { headers: { ...headers, ...options }, body: detokenized.bodyBytes };
  const out = await runTransform(
    deps,
    proxy,
    proxy.request_transform.code,
    {
      args: {
        body: detokenized.body,
        headers,
        method: request.method,
        path: request.pathSuffix,
        query: request.rawQuery ? `?${request.rawQuery}` : "",
      },
      configuration: await proxyConfiguration(deps.sealer, proxy),
    },
    handedOut,
  );
  return {
    headers: { ...headersFromCode(out.headers, HEADER_NAME), ...options },
    body: encodeBody(out.body),
  };
}

/** A refused or failed exchange is the proxy's answer (the caller's fault, or the destination's). */
async function forwardTo(
  deps: ProxyInvokeDeps,
  proxy: StoredProxy,
  request: InvokeRequest,
  outbound: Outbound,
): Promise<InvokeResponse> {
  const allowPrivate = deps.config.proxyAllowPrivate;
  const sent = {
    tenantId: proxy.tenant_id,
    destinationUrl: proxy.destination_url,
    pathSuffix: request.pathSuffix,
    rawQuery: request.rawQuery,
    method: request.method,
    headers: outbound.headers,
    ...(outbound.body ? { body: outbound.body } : {}),
  };
  // The destination's round trip and answer class, as metrics (the tenant in metadata, never the URL).
  const forward = () =>
    deps.egress.forward(sent, {
      allowPrivate,
      requireHttps: !allowPrivate,
      selfHosts: request.selfHosts,
      timeoutMs: destinationTimeoutMs(proxy, request),
      maxResponseBytes: PROXY_MAX_RESPONSE_BYTES,
    });
  return timedDestination(deps, proxy.tenant_id, forward).catch((error: unknown) => {
    if (!(error instanceof EgressError)) throw error;
    throw new ProxyError(KIND_OF_EGRESS_ERROR[error.code], error.message, {
      code: error.code.replace(/_/g, "-"),
      title: "Proxy Error",
    });
  });
}

async function transformResponse(
  deps: ProxyInvokeDeps,
  proxy: StoredProxy,
  response: InvokeResponse,
  handedOut: boolean,
): Promise<InvokeResponse> {
  if (!proxy.response_transform) return response;
  const text = response.body.toString("utf8");
  const isJsonAnswer = /\bjson\b/i.test(String(response.headers["content-type"] ?? ""));
  const out = await runTransform(
    deps,
    proxy,
    proxy.response_transform.code,
    {
      args: { body: text, headers: response.headers },
      configuration: await proxyConfiguration(deps.sealer, proxy),
    },
    handedOut,
    // A JSON answer (up to 4 MiB) is parsed by the sandbox, in the run's time, not here on the shared process.
    { parseArgsBody: isJsonAnswer },
  );
  const body = encodeBody(out.body) ?? Buffer.alloc(0);
  if (body.length > PROXY_MAX_RESPONSE_BYTES) throw responseTooLarge();
  return {
    status: response.status,
    // As the destination's own: no hop-by-hop, set-cookie, content-length (re-framed) or svc-* header.
    headers: responseHeaders(headersFromCode(out.headers)),
    body,
  };
}

/** The answer's headers, safe as object keys, with the destination's own status beside them. */
function answer(destinationStatus: number, response: InvokeResponse): InvokeResponse {
  const headers = nullObject<string | string[]>();
  for (const [name, value] of Object.entries(response.headers))
    if (!isForbiddenHeaderName(name)) headers[name] = value;
  headers["svc-proxy-destination-status"] = String(destinationStatus);
  return { ...response, headers };
}
