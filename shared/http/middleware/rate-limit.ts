import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { Authenticator } from "#shared/domain/authentication.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { tooManyRequests } from "#shared/domain/errors.ts";
import type { StoredProxy } from "#shared/domain/proxies/proxy.ts";
import {
  type Admission,
  addressBucket,
  browserBucket,
  type RateLimiter,
  tenantBucket,
} from "#shared/domain/rate-limit.ts";
import { isHandedOut } from "#shared/domain/sessions.ts";
import { hashKey } from "#shared/ids.ts";
import {
  header,
  type MatchedRoute,
  type RequestState,
  type SvcMiddleware,
  type SvcRequest,
} from "../request-state.ts";

export interface RateLimitPorts {
  /** Absent: rate limiting is off (SVC_RATE_LIMIT_PER_SECOND=0). */
  rateLimiter: Pick<RateLimiter, "admit"> | undefined;
  /** The budget of routes with a `rateBucket` (search), per tenant; absent when rate limiting is off. */
  searchRateLimiter?: Pick<RateLimiter, "admit"> | undefined;
  /** The browser-held keys' sub-budget of each tenant (browserBucket); absent when rate limiting is off. */
  browserRateLimiter?: Pick<RateLimiter, "admit"> | undefined;
  /** The same keys' sub-budget of their tenant's `rateBucket` budgets (search). */
  browserSearchRateLimiter?: Pick<RateLimiter, "admit"> | undefined;
  /** The proxy group's proxies (cached by key): an invocation counts against its proxy's tenant. */
  proxies?: {
    findByKey(keyHash: string): Promise<Pick<StoredProxy, "tenant_id" | "require_auth"> | undefined>;
  };
  /**
   * A require_auth proxy's caller is authenticated by the proxy (its routes have no `auth`), not before this
   * middleware: its SVC-API-KEY is looked up here (the invocation's own lookup is then a cache hit).
   */
  authenticator?: Pick<Authenticator, "authenticate">;
}

/**
 * Counts every request against its bucket, after authentication: a key's tenant (application and session
 * keys alike), a proxy invocation's tenant (by its proxy key), and otherwise the caller's source address
 * (an IPv6 caller's /64). Root-key requests (the operator) and system routes are not limited.
 * Over the limit: 429 problem+json with Retry-After (docs/operations.md, "Rate limits"). The bucket is kept on
 * the request state: the request's expression renders are charged to the same tenant.
 */
export function rateLimit(ports: () => RateLimitPorts): SvcMiddleware {
  /** Throws 429 unless admitted; a promise only when an admission waits on a lease. */
  const settle = (admitting: Admission | Promise<Admission>, then?: () => void | Promise<void>) =>
    // Served from memory, the answer is there already: no promise to wait for (nor a closure to make).
    admitting instanceof Promise
      ? admitting.then((admission) => admitted(admission, then))
      : admitted(admitting, then);
  const admitIn = (route: MatchedRoute, state: RequestState, { bucket, handedOut }: Bucket) => {
    // The request's expression renders draw from the same tenant's share (shared/http/lambda.ts).
    state.bucket = bucket;
    const limiter = ports().rateLimiter;
    if (!limiter) return;
    // A key handed out beyond the tenant's back end (in every visitor's browser, or an open proxy's URL given to
    // a third party) spends its tenant's budget within a sub-budget of half of it: one copied from a checkout
    // page cannot leave the tenant's back end nothing. The sub-budget leases its blocks from the tenant's
    // counter too (RateLimiterOptions.parent), so such a request is admitted by it alone: what its processes
    // lease of the tenant's budget is at most what the sub-budget holds.
    const sub = handedOut === undefined ? undefined : ports().browserRateLimiter;
    const admitting =
      handedOut !== undefined && sub ? sub.admit(browserBucketOf(handedOut)) : limiter.admit(bucket);
    const own = route.rateBucket ? ports().searchRateLimiter : undefined;
    if (!own) return settle(admitting);
    // Within half of it for the same keys: a session granted token:search in a browser spent the whole of it.
    const ownSub = handedOut === undefined ? undefined : ports().browserSearchRateLimiter;
    return settle(admitting, () =>
      settle(
        handedOut !== undefined && ownSub
          ? ownSub.admit(`${browserBucket(handedOut)}#${route.rateBucket}`)
          : own.admit(`${bucket}#${route.rateBucket}`),
      ),
    );
  };
  return {
    before: (request) => {
      const state = request.context.svc;
      const route = state.route;
      // System routes answer from memory (health, OpenAPI; the test clock is root-only) and reach no table.
      if (!route || route.auth === "root" || route.group === "system") return;
      // A key's request (nearly all) knows its bucket without waiting on anything.
      const known = principalBucket(request);
      return known
        ? admitIn(route, state, known)
        : bucketOf(request, ports()).then((found) => admitIn(route, state, found));
    },
  };
}

/** Throws 429 for a refused admission; otherwise runs what comes next (another budget's admission), if anything. */
function admitted(admission: Admission, then?: () => void | Promise<void>): void | Promise<void> {
  if (!admission.allowed) throw tooManyRequests(admission.retryAfterSeconds);
  return then?.();
}

type Bucket = { bucket: string; handedOut?: string };

/**
 * Bucket names by tenant, made once: the same string each request, so the limiter's map finds it without hashing
 * a new one. Bounded: past the cap it starts again (names are cheap to make, the cap only bounds memory).
 */
const BUCKET_NAMES_KEPT = 10_000;
const tenantBuckets = new Map<string, string>();
const browserBuckets = new Map<string, string>();
function named(names: Map<string, string>, tenantId: string, make: (id: string) => string): string {
  let name = names.get(tenantId);
  if (name === undefined) {
    if (names.size >= BUCKET_NAMES_KEPT) names.clear();
    name = make(tenantId);
    names.set(tenantId, name);
  }
  return name;
}
const tenantBucketOf = (tenantId: string) => named(tenantBuckets, tenantId, tenantBucket);
const browserBucketOf = (tenantId: string) => named(browserBuckets, tenantId, browserBucket);

/** The bucket of a request made with a key (its tenant's), or undefined: no key, or the root key. */
function principalBucket(request: SvcRequest): Bucket | undefined {
  const { principal } = request.context.svc;
  if (!principal || principal.kind === "root") return undefined;
  return { bucket: tenantBucketOf(principal.tenantId), handedOut: browserTenantOf(principal) };
}

/**
 * The request's bucket, and the tenant whose handed-out keys' sub-budget admits it: a browser-held key's (a
 * session's, a public application's), or a proxy invocation by its proxy key alone (no API key: an open proxy's
 * caller, or one its proxy will refuse), since an open proxy's key is given out like a public key.
 */
async function bucketOf(request: SvcRequest, { proxies, authenticator }: RateLimitPorts): Promise<Bucket> {
  const known = principalBucket(request);
  if (known) return known;
  const { route } = request.context.svc;
  if (route?.group === "proxy" && proxies) {
    const proxyKey = proxyKeyOf(request.event);
    // Through the proxy store's cache: the invocation's own lookup of the same key is then a cache hit.
    const proxy = proxyKey ? await proxies.findByKey(hashKey(proxyKey)) : undefined;
    if (proxy) {
      const bucket = tenantBucketOf(proxy.tenant_id);
      // A require_auth proxy called with a back-end key of its tenant (the proxy acts as that key): the back end's
      // own traffic, counted as its key's. Without one (or with a key the proxy refuses), the proxy key alone.
      const apiKey = proxy.require_auth ? header(request.event, "svc-api-key") : undefined;
      const caller =
        apiKey !== undefined && authenticator
          ? await authenticator.authenticate(apiKey, { rootAllowed: false })
          : undefined;
      if (caller && caller.kind !== "root" && caller.tenantId === proxy.tenant_id)
        return { bucket, handedOut: browserTenantOf(caller) };
      return { bucket, handedOut: proxy.tenant_id };
    }
  }
  return { bucket: addressBucket(request.event.requestContext.http.sourceIp) };
}

/** The proxy key as the proxy handler reads it: the header, else the first svc-proxy-key query parameter. */
function proxyKeyOf(event: APIGatewayProxyEventV2): string | undefined {
  const fromHeader = header(event, "svc-proxy-key");
  if (fromHeader !== undefined) return fromHeader;
  try {
    for (const pair of (event.rawQueryString ?? "").split("&")) {
      if (pair === "") continue;
      if (decodeURIComponent(pair.split("=")[0] ?? "").toLowerCase() !== "svc-proxy-key") continue;
      return decodeURIComponent(pair.slice(pair.indexOf("=") + 1).replace(/\+/g, " "));
    }
  } catch {
    // A malformed query: the invocation refuses it; here it counts against the source address.
  }
  return undefined;
}

/** The tenant of a key handed out beyond its back end (sessions.ts isHandedOut), else undefined. */
function browserTenantOf(principal: TenantPrincipal): string | undefined {
  return isHandedOut(principal) ? principal.tenantId : undefined;
}
