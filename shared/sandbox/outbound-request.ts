/**
 * The host's rules for a `fetch` made by tenant code (carried out by outbound-fetch.ts): what a request may
 * be, where it may go (scheme, the tenant's allowed hosts), and how much one run may send, receive and wait.
 * The address rule (private, loopback, link-local, metadata, internal endpoints) is not here: it is
 * address-guard.ts's, applied at connect time, the one rule of every outbound connection.
 */

export interface OutboundLimits {
  /** Requests one run may make, each redirect followed counting as one. */
  maxRequests: number;
  /** Request body bytes one run may send, over all its requests. */
  maxBytesOut: number;
  /** Response body bytes one run may receive, over all its requests. */
  maxBytesIn: number;
  /** Longest one request may take, connect to last body byte; always cut before the run's own deadline. */
  timeoutMs: number;
}

export const DEFAULT_OUTBOUND_LIMITS: OutboundLimits = {
  maxRequests: 50,
  maxBytesOut: 5 * 1024 * 1024,
  maxBytesIn: 10 * 1024 * 1024,
  timeoutMs: 10_000,
};

/** How a sandbox carries out its code's requests (the same for every run of that sandbox). */
export interface OutboundPolicy {
  /** SVC_PROXY_ALLOW_PRIVATE: loopback/private addresses may be reached (never internal or metadata ones). */
  allowPrivate: boolean;
  /** Only https (AWS). */
  requireHttps: boolean;
  limits: OutboundLimits;
}

export type RedirectMode = "follow" | "manual" | "error";

/** A request as the code made it, checked. */
export interface CodeRequest {
  url: URL;
  method: string;
  headers: [string, string][];
  body: Buffer | undefined;
  redirect: RedirectMode;
  /** node-fetch v2's `timeout` option, if the code gave one. */
  timeoutMs: number | undefined;
}

/**
 * Why a fetch fails, as the code sees it: a FetchError with node-fetch's `type` ("request-timeout",
 * "max-size", "no-redirect", "system") or ours ("refused", "limit", "invalid"). Messages name the origin at
 * most (a URL's path or query may hold data), never a resolved address.
 */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly type: string,
  ) {
    super(message);
    this.name = "OutboundError";
  }
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** What Node sends as a header value: tab, visible ASCII and Latin-1 (it throws on anything else). */
const SAFE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Set by the host (framing, connection reuse, encodings it does not decode): dropped from the code's headers. */
const HOST_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "proxy-connection",
  "te",
  "trailer",
  "expect",
  "accept-encoding",
]);
/** Credentials that do not follow a redirect to another origin (as browsers and node-fetch do). */
const ORIGIN_BOUND_HEADERS = new Set(["authorization", "cookie", "proxy-authorization", "www-authenticate"]);
const MAX_REDIRECTS = 20;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The request the child sent (JSON, from code: checked like any input), or an OutboundError. */
export function readCodeRequest(json: string): CodeRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    raw = undefined;
  }
  if (!isRecord(raw) || typeof raw.url !== "string" || typeof raw.method !== "string")
    throw new OutboundError("the request is malformed", "invalid");
  let url: URL;
  try {
    url = new URL(raw.url);
  } catch {
    throw new OutboundError("the URL is not absolute", "invalid");
  }
  const method = raw.method.toUpperCase();
  if (!METHODS.has(method))
    throw new OutboundError(`the method ${method.slice(0, 20)} is not allowed`, "invalid");
  const headers: [string, string][] = [];
  for (const pair of Array.isArray(raw.headers) ? raw.headers : []) {
    if (!Array.isArray(pair) || typeof pair[0] !== "string" || typeof pair[1] !== "string")
      throw new OutboundError("the headers are malformed", "invalid");
    const name = pair[0].toLowerCase();
    if (!TOKEN.test(name) || !SAFE_VALUE.test(pair[1]))
      throw new OutboundError("a header name or value is invalid", "invalid");
    if (!HOST_HEADERS.has(name)) headers.push([name, pair[1]]);
  }
  const body = typeof raw.body === "string" ? Buffer.from(raw.body, "base64") : undefined;
  const redirect = raw.redirect === "manual" || raw.redirect === "error" ? raw.redirect : "follow";
  const timeoutMs =
    typeof raw.timeoutMs === "number" && Number.isFinite(raw.timeoutMs) && raw.timeoutMs > 0
      ? Math.ceil(raw.timeoutMs)
      : undefined;
  return { url, method, headers, body, redirect, timeoutMs };
}

/** Whether `url`'s host is on the list: `host`, `host:port`, or `*.domain` (any subdomain, not the domain). */
export function hostAllowed(url: URL, allowedHosts: readonly string[]): boolean {
  return listedHost(url, allowedHosts) !== undefined;
}

/** The entry of `allowedHosts` that `url`'s host matches (`*.domain` for any of its subdomains), if any. */
export function listedHost(url: URL, allowedHosts: readonly string[]): string | undefined {
  const hostname = bare(url.hostname);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return allowedHosts.find((entry) => {
    const parsed = parseAllowedHost(entry);
    if (parsed === undefined || (parsed.port !== undefined && parsed.port !== port)) return false;
    return parsed.wildcard ? hostname.endsWith(`.${parsed.hostname}`) : hostname === parsed.hostname;
  });
}

/** Why an `allowed_hosts` entry is invalid (for the API's validation), or undefined. */
export function allowedHostError(entry: string): string | undefined {
  return parseAllowedHost(entry) === undefined
    ? "must be a host name, optionally *. (any subdomain) before it and :port after it"
    : undefined;
}

function parseAllowedHost(
  entry: string,
): { hostname: string; port: string | undefined; wildcard: boolean } | undefined {
  const match = /^(\*\.)?(\[[0-9a-f:.]+\]|[^:/[\]\s*@?#]+)(?::(\d{1,5}))?$/i.exec(entry.trim());
  if (!match?.[2]) return undefined;
  try {
    // The same normalization as a request's URL (case, IDN, IPv4 forms).
    const url = new URL(`http://${match[2]}`);
    if (url.hostname === "") return undefined;
    return { hostname: bare(url.hostname), port: match[3], wildcard: match[1] !== undefined };
  } catch {
    return undefined;
  }
}

/** Why a request (first or redirected) may not go to `url`, or undefined. */
export function destinationRefusal(
  url: URL,
  policy: Pick<OutboundPolicy, "requireHttps">,
  allowedHosts: readonly string[] | undefined,
): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") return "only http and https are allowed";
  if (policy.requireHttps && url.protocol !== "https:") return "only https is allowed";
  if (url.username || url.password) return "URLs must not carry credentials";
  if (allowedHosts !== undefined && !hostAllowed(url, allowedHosts))
    return `${url.host} is not one of the allowed hosts`;
  return undefined;
}

/**
 * The request that follows a redirect (status 301, 302, 303, 307 or 308 with a Location), as fetch does it:
 * 303, and 301/302 after a POST, become a GET without body; credentials stay behind on another origin.
 */
export function redirected(request: CodeRequest, status: number, location: string): CodeRequest {
  let url: URL;
  try {
    url = new URL(location, request.url);
  } catch {
    throw new OutboundError(`request to ${request.url.origin} redirected to an invalid URL`, "invalid");
  }
  const toGet = status === 303 || ((status === 301 || status === 302) && request.method === "POST");
  const sameOrigin = url.origin === request.url.origin;
  const headers = request.headers.filter(
    ([name]) =>
      (sameOrigin || !ORIGIN_BOUND_HEADERS.has(name)) &&
      !(toGet && (name === "content-type" || name.startsWith("content-"))),
  );
  return {
    ...request,
    url,
    method: toGet && request.method !== "HEAD" ? "GET" : request.method,
    headers,
    body: toGet ? undefined : request.body,
  };
}

export const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);
export { MAX_REDIRECTS };

/**
 * What one run has used of its limits. Every request (redirects included) is counted before it starts;
 * bytes in are counted as they arrive, so a large answer is cut at the limit, not after.
 */
export class RunBudget {
  private requests = 0;
  private bytesOut = 0;
  private bytesIn = 0;

  constructor(
    readonly limits: OutboundLimits,
    /** performance.now() at which the run ends. */
    private readonly deadline: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Counts a request about to start; throws when it would pass a limit. Returns its timeout in ms. */
  startRequest(request: CodeRequest): number {
    const origin = request.url.origin;
    if (this.requests >= this.limits.maxRequests)
      throw new OutboundError(
        `request to ${origin} refused: a run may make at most ${this.limits.maxRequests} requests`,
        "limit",
      );
    const size = request.body?.length ?? 0;
    if (this.bytesOut + size > this.limits.maxBytesOut)
      throw new OutboundError(
        `request to ${origin} refused: a run may send at most ${this.limits.maxBytesOut} bytes`,
        "max-size",
      );
    const timeoutMs = this.timeoutFor(request);
    if (timeoutMs < 1)
      throw new OutboundError(`request to ${origin} refused: the run has no time left`, "request-timeout");
    this.requests += 1;
    this.bytesOut += size;
    return timeoutMs;
  }

  /** Counts response bytes; throws once the run has received more than it may. */
  receive(bytes: number, origin: string): void {
    this.bytesIn += bytes;
    if (this.bytesIn > this.limits.maxBytesIn)
      throw new OutboundError(
        `response from ${origin} is too large: a run may receive at most ${this.limits.maxBytesIn} bytes`,
        "max-size",
      );
  }

  /** The limit, the code's own timeout if shorter, and never past the run's deadline (less a margin to handle it). */
  private timeoutFor(request: CodeRequest): number {
    const left = Math.floor(this.deadline - this.now() - RUN_MARGIN_MS);
    return Math.min(this.limits.timeoutMs, request.timeoutMs ?? Number.POSITIVE_INFINITY, left);
  }
}

/** Time kept between a request's timeout and the run's deadline: the code can still catch the error. */
const RUN_MARGIN_MS = 100;

function bare(hostname: string): string {
  let name = hostname.toLowerCase();
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  return name.endsWith(".") ? name.slice(0, -1) : name;
}
