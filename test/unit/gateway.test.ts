import { request as httpRequest, IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Socket } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { preflightRoutes } from "#shared/http/cors.ts";
import { RouteMatcher } from "#shared/http/match.ts";
import type { FunctionGroup } from "#shared/http/route.ts";
import { createGateway, type HttpLambda, parseTarget, toEvent } from "#shared/local/gateway.ts";

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

describe("local gateway answers", () => {
  /** One GET through a gateway whose system function answers `result`: status, raw headers, body bytes. */
  async function answerOf(result: Awaited<ReturnType<HttpLambda>>) {
    const handler: HttpLambda = async () => result;
    const handlers = new Proxy({} as Record<FunctionGroup, HttpLambda>, { get: () => handler });
    const server = createGateway(routeList, handlers);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      return await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
        (resolve, reject) => {
          const req = httpRequest({ host: "127.0.0.1", port, path: "/anything", method: "GET" }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          });
          req.on("error", reject);
          req.end();
        },
      );
    } finally {
      server.close();
    }
  }

  it("frames answers by their own Content-Length, as API Gateway does, never chunked nor as the function said", async () => {
    const text = await answerOf({
      statusCode: 200,
      headers: { "content-type": "application/json", "Content-Length": "1" },
      body: JSON.stringify({ card: "4242 •••• ünïcode" }),
    });
    expect(text.headers["transfer-encoding"]).toBeUndefined();
    expect(text.headers["content-length"]).toBe(String(text.body.length));
    expect(JSON.parse(text.body.toString("utf8"))).toEqual({ card: "4242 •••• ünïcode" });

    const binary = await answerOf({
      statusCode: 200,
      body: Buffer.from([0, 255, 1]).toString("base64"),
      isBase64Encoded: true,
    });
    expect(binary.headers["content-length"]).toBe("3");
    expect([...binary.body]).toEqual([0, 255, 1]);

    const empty = await answerOf({ statusCode: 202 });
    expect(empty.headers["content-length"]).toBe("0");
    expect(empty.headers["transfer-encoding"]).toBeUndefined();
    const none = await answerOf({ statusCode: 204 });
    expect(none.status).toBe(204);
    expect(none.headers["content-length"]).toBeUndefined();
  });
});

describe("what a slow or oversized caller costs the local gateway (availability review, 28 Nov 2026)", () => {
  it("gives a request API Gateway's time to arrive, not Node's 300 s, and caps the connections held at once", () => {
    const server = createGateway(routeList, {} as Record<FunctionGroup, HttpLambda>);
    expect(server.requestTimeout).toBeLessThanOrEqual(30_000);
    expect(server.headersTimeout).toBeLessThanOrEqual(30_000);
    expect(server.maxConnections).toBeLessThan(Number.POSITIVE_INFINITY);
  });

  it("answers 413 to a body past 10 MB, runs no function, and does not wait for the rest of it", async () => {
    let calls = 0;
    const handler: HttpLambda = async () => {
      calls++;
      return { statusCode: 200 };
    };
    const handlers = new Proxy({} as Record<FunctionGroup, HttpLambda>, { get: () => handler });
    const server = createGateway(routeList, handlers);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const socket = new Socket();
      let answer = "";
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      socket.on("data", (chunk: Buffer) => {
        answer += chunk.toString("latin1");
      });
      socket.on("error", () => undefined);
      await new Promise<void>((resolve) => socket.connect(port, "127.0.0.1", resolve));
      socket.write(
        "POST /tokens HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n",
      );
      // 11 MB of the announced 50: the rest never comes, and the gateway does not wait for it.
      socket.write(Buffer.alloc(11 * 1024 * 1024, 0x20));
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(calls).toBe(0);
    } finally {
      server.close();
    }
  });
});
