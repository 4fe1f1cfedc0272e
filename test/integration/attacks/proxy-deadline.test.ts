/**
 * Review round 6: a proxy's destination had 25 s whatever was left of the function's time, so a request
 * transform and a slow destination could outlast the function (28 s): the caller got a bare gateway 5xx, without
 * SVC-PROXY-DESTINATION-STATUS, after the request was sent (which reads as "never reached": a retry pays twice).
 * The destination's deadline now ends with what is left of the request's time, as a 504 `timeout` proxy_error.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localHandlers } from "#functions/local.ts";
import { openProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });

let silent: Server; // accepts, reads, never answers
let silentUrl: string;
let reached = 0;
beforeAll(async () => {
  silent = createServer((req) => {
    reached += 1;
    req.resume();
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(() => {
  silent.closeAllConnections();
  silent.close();
});

/** The proxy function's event for a POST /proxy that reached API Gateway `ageMs` ago. */
const eventOf = (proxyKey: string, ageMs: number): APIGatewayProxyEventV2 => ({
  version: "2.0",
  routeKey: "POST /proxy",
  rawPath: "/proxy",
  rawQueryString: "",
  headers: { "svc-proxy-key": proxyKey, "content-type": "application/json", host: "vault.example" },
  requestContext: {
    accountId: "local",
    apiId: "local",
    domainName: "vault.example",
    domainPrefix: "local",
    http: { method: "POST", path: "/proxy", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "test" },
    requestId: "deadline-test",
    routeKey: "POST /proxy",
    stage: "$default",
    time: new Date().toUTCString(),
    timeEpoch: Date.now() - ageMs,
  },
  body: '{"a":1}',
  isBase64Encoded: false,
});

describe("attack: a slow destination outlasting the function", () => {
  it("gives the destination only what is left of the request's time, and sends nothing when under a second is left", async () => {
    const key = await openProxy(svc.url, svc.rootKey, silentUrl);
    const { deps } = svc.service;
    const given: (number | undefined)[] = [];
    const egress = { ...deps.egress };
    egress.forward = (request, options) => {
      given.push(options.timeoutMs);
      return deps.egress.forward(request, options);
    };
    const handler = localHandlers({ ...deps, egress }).proxy;
    const context = { getRemainingTimeInMillis: () => 30_000, awsRequestId: "deadline-test" } as Context;
    // 20 s after its arrival: 8 s of the function's 28 s are left, one of them kept for the answer.
    const result = await handler(eventOf(key, 20_000), context);
    expect(result.statusCode).toBe(504);
    expect(String(result.body)).toContain("timeout");
    expect(given).toHaveLength(1);
    expect(given[0]).toBeGreaterThanOrEqual(1_000);
    expect(given[0]).toBeLessThanOrEqual(7_000);
    // With less than a second left for the destination, nothing is sent: 503 not-sent (a timeout of 1 ms had
    // still written the request on a pooled connection, and its 504 read as "maybe sent").
    const before = reached;
    const late = await handler(eventOf(key, 40_000), context);
    expect(late.statusCode).toBe(503);
    expect(String(late.body)).toContain("not-sent");
    expect(given).toHaveLength(1);
    expect(reached).toBe(before);
  });
});
