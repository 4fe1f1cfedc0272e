import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { nullObject } from "#shared/domain/safe-keys.ts";
import { type PreflightRoute, preflightRoutes } from "#shared/http/cors.ts";
import { RouteMatcher } from "#shared/http/match.ts";
// A caller's `__proto__` header line is dropped by the parser instead of crashing the server for everyone.
import "#shared/http/safe-headers.ts";
import { PROBLEM_CONTENT_TYPE } from "#shared/http/problem.ts";
import type { ApiRoute, FunctionGroup } from "#shared/http/route.ts";
import { SECURITY_HEADERS } from "#shared/http/security-headers.ts";

export type HttpLambda = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway refuses payloads above 10 MB before any function runs; so does the local gateway. */
export const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Time a request may take to arrive (headers and body), as API Gateway's 30 s; headers alone 20 s. */
export const GATEWAY_REQUEST_TIMEOUT_MS = 30_000;
export const GATEWAY_HEADERS_TIMEOUT_MS = 20_000;
/** Connections held at once; more are closed as they come (Node's server.maxConnections). */
export const GATEWAY_MAX_CONNECTIONS = 1024;

const EMPTY_BODY = Buffer.alloc(0);

const TEXT_TYPES = /^(application\/(.*\+)?json|application\/x-www-form-urlencoded|text\/)/i;

function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_MAX_BODY_BYTES) {
        done("too-large");
        // Nothing more is read or held: the answer goes out and the connection closes (as API Gateway's does).
        req.removeAllListeners("data");
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => done(Buffer.concat(chunks)));
    req.on("error", fail);
  });
}

/**
 * A request target whose path WHATWG URL parsing would keep as it is: no dot segment to resolve, nothing to
 * percent-encode or decode, no query or fragment, no leading "//" (which URL reads as a host): the common case,
 * parsed without a URL object.
 */
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9\-_~/:@!$&'()*+,;=]*$/;

/** The target's path and query as WHATWG URL parsing gives them (`search` with its "?", or ""). */
export function parseTarget(target: string): { pathname: string; search: string } {
  if (PLAIN_PATH.test(target)) return { pathname: target, search: "" };
  const url = new URL(target, "http://localhost");
  return { pathname: url.pathname, search: url.search };
}

/**
 * Turns a Node request into the API Gateway HTTP API (payload 2.0) event the Lambda would receive, routed
 * by `matcher` (over the route table the gateway was given).
 */
export function toEvent(
  matcher: RouteMatcher<ApiRoute>,
  req: IncomingMessage,
  body: Buffer,
  preflights?: RouteMatcher<PreflightRoute>,
): { event: APIGatewayProxyEventV2; group: FunctionGroup } {
  const url = parseTarget(req.url ?? "/");
  const method = (req.method ?? "GET").toUpperCase();
  const found = matcher.match(method, url.pathname);
  const routed = found && "route" in found ? found : undefined;
  // As API Gateway: a CORS path's OPTIONS has a route of its own, to the system function (lib/constructs).
  const preflight = !routed && method === "OPTIONS" ? preflights?.match(method, url.pathname) : undefined;
  const routeKey = routed?.routeKey ?? (preflight && "route" in preflight ? preflight.routeKey : "$default");
  // Header and query names come from the caller: null-prototype maps, so `__proto__` is an ordinary name.
  const headers = nullObject<string>();
  const given = req.headers;
  for (const name of Object.keys(given)) {
    const value = given[name];
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  let queryStringParameters: Record<string, string> | undefined;
  if (url.search)
    for (const [name, value] of new URLSearchParams(url.search)) {
      queryStringParameters ??= nullObject<string>();
      const seen = queryStringParameters[name];
      queryStringParameters[name] = seen === undefined ? value : `${seen},${value}`;
    }
  const contentType = headers["content-type"] ?? "";
  // A body without a text Content-Type (or none at all), or whose bytes are not UTF-8, reaches the function
  // base64-encoded: decoded as text, its bytes would not survive.
  const isText = body.length === 0 || (TEXT_TYPES.test(contentType) && isUtf8(body));
  const now = Date.now();
  const requestId = randomUUID();
  const rawQueryString = url.search.startsWith("?") ? url.search.slice(1) : "";
  const event: APIGatewayProxyEventV2 = {
    version: "2.0",
    routeKey,
    rawPath: url.pathname,
    rawQueryString,
    headers,
    requestContext: {
      accountId: "local",
      apiId: "local",
      domainName: headers.host ?? "localhost",
      domainPrefix: "local",
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId,
      routeKey,
      stage: "$default",
      time: utcText(now),
      timeEpoch: now,
    },
    isBase64Encoded: body.length > 0 && !isText,
  };
  if (headers.cookie) event.cookies = headers.cookie.split(/;\s*/);
  if (queryStringParameters) event.queryStringParameters = queryStringParameters;
  if (routed && hasOwnKeys(routed.pathParameters)) event.pathParameters = routed.pathParameters;
  if (body.length > 0) event.body = isText ? body.toString("utf8") : body.toString("base64");
  return { event, group: routed?.route.group ?? "system" };
}

/** Date#toUTCString of `ms`, which names only the second: made once a second, not per request. */
let utcSecond = Number.NaN;
let utcSecondText = "";
function utcText(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== utcSecond) {
    utcSecond = second;
    utcSecondText = new Date(ms).toUTCString();
  }
  return utcSecondText;
}

function hasOwnKeys(map: Record<string, string>): boolean {
  for (const name in map) if (Object.hasOwn(map, name)) return true;
  return false;
}

/** A local function's names, as the Lambda of its group has them: made once per group, not per request. */
interface FunctionNames {
  functionName: string;
  invokedFunctionArn: string;
  logGroupName: string;
}
const functionNames = new Map<FunctionGroup, FunctionNames>();
function namesOf(group: FunctionGroup): FunctionNames {
  let names = functionNames.get(group);
  if (!names) {
    names = {
      functionName: `svc-${group}`,
      invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:svc-${group}`,
      logGroupName: `/aws/lambda/svc-${group}`,
    };
    functionNames.set(group, names);
  }
  return names;
}

/** The Lambda context of a local invocation: a class, as one is made for every request. */
class LocalContext implements Context {
  readonly callbackWaitsForEmptyEventLoop = false;
  readonly functionName: string;
  readonly functionVersion = "$LATEST";
  readonly invokedFunctionArn: string;
  readonly memoryLimitInMB = "512";
  readonly logGroupName: string;
  readonly logStreamName = "local";
  private readonly deadline = Date.now() + 30_000;

  constructor(
    group: FunctionGroup,
    readonly awsRequestId: string,
  ) {
    const names = namesOf(group);
    this.functionName = names.functionName;
    this.invokedFunctionArn = names.invokedFunctionArn;
    this.logGroupName = names.logGroupName;
  }

  getRemainingTimeInMillis(): number {
    return Math.max(0, this.deadline - Date.now());
  }
  done(): void {}
  fail(): void {}
  succeed(): void {}
}

/**
 * Writes the function's result as API Gateway does: with a Content-Length (its own, whatever the result says), so
 * the answer is one write of head and body rather than chunked.
 */
function send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  // Name, value, name, value…: the list Node's writeHead takes as it is, rather than a map built for it.
  const head: (string | string[])[] = [];
  const given = result.headers;
  const cookies = result.cookies?.length ? result.cookies : undefined;
  if (given)
    for (const name of Object.keys(given)) {
      // The result's cookies are the answer's set-cookie lines (API Gateway's payload 2.0).
      if (name.length === 14 && name.toLowerCase() === "content-length") continue;
      if (cookies && name === "set-cookie") continue;
      head.push(name, String(given[name]));
    }
  if (cookies) head.push("set-cookie", cookies);
  const status = result.statusCode ?? 200;
  if (result.body === undefined) {
    // No body at all: 204 and 304 carry no length either.
    if (status !== 204 && status !== 304) head.push("content-length", "0");
    res.writeHead(status, head);
    res.end();
    return;
  }
  const body = result.isBase64Encoded ? Buffer.from(result.body, "base64") : result.body;
  head.push("content-length", String(typeof body === "string" ? Buffer.byteLength(body) : body.length));
  res.writeHead(status, head);
  res.end(body);
}

const gatewayProblem = (status: number, title: string, detail: string) => ({
  statusCode: status,
  headers: { "content-type": PROBLEM_CONTENT_TYPE, ...SECURITY_HEADERS },
  body: JSON.stringify({ type: "about:blank", title, status, detail }),
});

/** Loopback addresses a connection may arrive on (IPv4, IPv6, IPv4-mapped IPv6). */
const LOOPBACK_ADDRESS = /^(?:127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
/** Host names only this machine answers to: localhost (and its subdomains) and IP literals. */
const LOCAL_HOST_NAME = /^(?:localhost|[a-z0-9.-]*\.localhost|\d+\.\d+\.\d+\.\d+|\[[0-9a-f:.]+\])$/i;

/**
 * Whether a request may be served, as API Gateway serves only its own domain names. A connection to a loopback
 * address comes from this machine, so its Host must be a name only this machine answers to: a page on another
 * site whose DNS name was re-pointed at 127.0.0.1 (DNS rebinding) is then same-origin with the API in the
 * browser, and the API's own-origin test (Origin equal to the Host) would skip the allowed_origins check.
 */
export function hostAllowed(req: IncomingMessage): boolean {
  if (!LOOPBACK_ADDRESS.test(req.socket.localAddress ?? "")) return true;
  const host = req.headers.host;
  if (host === undefined) return true;
  const name = host.replace(/:\d+$/, "");
  return LOCAL_HOST_NAME.test(name);
}

/** The local stand-in for API Gateway: routes by the route table it is given and calls the group's handler. */
export function createGateway(
  routes: readonly ApiRoute[],
  handlers: Record<FunctionGroup, HttpLambda>,
): Server {
  const matcher = new RouteMatcher(routes);
  const preflights = new RouteMatcher(preflightRoutes(routes));
  const server = createServer((req, res) => {
    void (async () => {
      // Before the body is read: a request refused for its Host has nothing of it held.
      if (!hostAllowed(req)) {
        send(
          res,
          gatewayProblem(
            421,
            "Misdirected Request",
            "On a loopback address this server answers only Host localhost, *.localhost or an IP literal (a guard against DNS rebinding; behind a proxy on this machine, send Host: localhost).",
          ),
        );
        return;
      }
      // A request that announces no body (neither length nor chunks) has none: no listeners, no promise.
      const bodiless =
        req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined;
      const body = bodiless ? EMPTY_BODY : await readBody(req);
      if (body === "too-large") {
        res.shouldKeepAlive = false;
        send(
          res,
          gatewayProblem(
            413,
            "Payload Too Large",
            `The request body exceeds ${GATEWAY_MAX_BODY_BYTES} bytes.`,
          ),
        );
        return;
      }
      const { event, group } = toEvent(matcher, req, body, preflights);
      const result = await handlers[group](event, new LocalContext(group, event.requestContext.requestId));
      send(res, result);
    })().catch(() => {
      if (!res.headersSent) send(res, gatewayProblem(502, "Bad Gateway", "The function failed to answer."));
      else res.destroy();
    });
  });
  // A request that trickles in is given what API Gateway gives it (it ends one at 29 s), not Node's 300 s, and the
  // connections held at once are capped: a few slow callers could otherwise keep the process's memory and sockets
  // (availability review, 28 Nov 2026).
  server.requestTimeout = GATEWAY_REQUEST_TIMEOUT_MS;
  server.headersTimeout = GATEWAY_HEADERS_TIMEOUT_MS;
  server.maxConnections = GATEWAY_MAX_CONNECTIONS;
  // What Node's parser refuses before any handler runs (headers or a URL over its 16 KB, malformed HTTP) is
  // answered as problem+json too, as API Gateway answers its own limits, never Node's bare status line.
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === "HPE_HEADER_OVERFLOW";
    const { statusCode, headers, body } = tooLarge
      ? gatewayProblem(431, "Request Header Fields Too Large", "The request's headers or URL are too large.")
      : gatewayProblem(400, "Bad Request", "The request is not valid HTTP.");
    const head = Object.entries({
      ...headers,
      "content-length": Buffer.byteLength(body),
      connection: "close",
    })
      .map(([name, value]) => `${name}: ${value}`)
      .join("\r\n");
    const reason = tooLarge ? "Request Header Fields Too Large" : "Bad Request";
    socket.end(`HTTP/1.1 ${statusCode} ${reason}\r\n${head}\r\n\r\n${body}`);
  });
  return server;
}
