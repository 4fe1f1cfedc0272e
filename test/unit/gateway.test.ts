import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { preflightRoutes } from "#shared/http/cors.ts";
import { RouteMatcher } from "#shared/http/match.ts";
import { parseTarget, toEvent } from "#shared/local/gateway.ts";

const matcher = new RouteMatcher(routeList);

function request(method: string, url: string, headers: Record<string, string> = {}): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.url = url;
  req.headers = headers;
  req.httpVersion = "1.1";
  return req;
}

describe("local gateway event", () => {
  it("builds an API Gateway HTTP API payload 2.0 event with route key and path parameters", () => {
    const { event, group } = toEvent(
      matcher,
      request("GET", "/applications/abc/keys/k1?x=1&x=2", {
        "SVC-API-KEY": "k",
        "content-type": "application/json",
      }),
      Buffer.alloc(0),
    );

    expect(group).toBe("applications");
    expect(event).toMatchObject({
      version: "2.0",
      routeKey: "GET /applications/{id}/keys/{keyId}",
      rawPath: "/applications/abc/keys/k1",
      rawQueryString: "x=1&x=2",
      queryStringParameters: { x: "1,2" },
      pathParameters: { id: "abc", keyId: "k1" },
      headers: { "svc-api-key": "k" },
      isBase64Encoded: false,
      requestContext: { http: { method: "GET", path: "/applications/abc/keys/k1" }, stage: "$default" },
    });
  });

  it("sends unknown paths to the system group's $default route and base64-encodes binary bodies", () => {
    const { event, group } = toEvent(
      matcher,
      request("POST", "/unknown", { "content-type": "application/octet-stream" }),
      Buffer.from([0, 1, 2, 255]),
    );

    expect(group).toBe("system");
    expect(event.routeKey).toBe("$default");
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(String(event.body), "base64")).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it("routes a CORS path's OPTIONS to its own preflight route on the system function, as API Gateway does", () => {
    const preflights = new RouteMatcher(preflightRoutes(routeList));
    const cors = toEvent(matcher, request("OPTIONS", "/tokens/abc"), Buffer.alloc(0), preflights);
    expect(cors.group).toBe("system");
    expect(cors.event.routeKey).toBe("OPTIONS /tokens/{id}");
    const management = toEvent(matcher, request("OPTIONS", "/applications"), Buffer.alloc(0), preflights);
    expect(management.event.routeKey).toBe("$default");
  });
});

describe("request targets", () => {
  it("gives the path and query WHATWG URL parsing gives, for any target (dot segments, escapes, queries)", () => {
    const piece = fc.constantFrom(
      ..."abz09-_~.%2F:@!$&'()*+,;=?#/ \\\"<>é{}|^`[]".split(""),
      "..",
      "%2e",
      "%zz",
      "%00",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const target = `/${pieces.join("")}`;
        const outcome = (parse: () => { pathname: string; search: string }) => {
          try {
            const { pathname, search } = parse();
            return { pathname, search };
          } catch (error) {
            return { threw: (error as Error).name };
          }
        };
        expect(outcome(() => parseTarget(target))).toEqual(
          outcome(() => new URL(target, "http://localhost")),
        );
      }),
      { numRuns: 3000 },
    );
  });
});
