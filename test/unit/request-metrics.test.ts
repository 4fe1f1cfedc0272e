import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { beforeEach, describe, expect, it } from "vitest";
import * as logs from "#functions/logs/handler.ts";
import * as system from "#functions/system/handler.ts";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import { routeTable } from "#shared/api/index.ts";
import type { Principal } from "#shared/domain/entities.ts";
import { createHttpHandler, type HttpPorts } from "#shared/http/lambda.ts";
import { METRIC_SPEC, type MetricName } from "#shared/observability/metric-names.ts";

/**
 * The HTTP chain's metrics, through the very handler factory every function uses, with the recording adapter:
 * one request yields Requests, its answer class and Latency, by `route` (the route id, never the path), the
 * tenant in metadata only, flushed once.
 */
const TENANT = "3f1c9a52-7d4e-4b1a-9c7e-0d2b8e6f4a11";
const metrics = new RecordingMetrics();
let now = 1_000_000;
let storeUp = true;

const principal: Principal = {
  kind: "application",
  tenantId: TENANT,
  keyId: "key-1",
  application: {
    id: "app-1",
    tenant_id: TENANT,
    name: "ops",
    type: "management",
    permissions: ["log:read"],
    rules: [],
    created_at: "2026-01-01T00:00:00.000Z",
  },
};

const deps = {
  metrics,
  // Each reading moves 7 ms: the latency is the chain's time on this clock, not the wall clock's.
  clock: {
    now: () => {
      now += 7;
      return new Date(now);
    },
  },
  authenticator: {
    authenticate: async (key: string | undefined) => (key === "good" ? principal : undefined),
  },
  rateLimiter: undefined,
  storeHealth: { reachable: async () => storeUp },
  keyHealth: { usable: async () => true },
} as unknown as HttpPorts & logs.LogsDeps & system.SystemDeps;

const systemHandler = createHttpHandler(routeTable, "system", system.routes, () => deps);
const logsHandler = createHttpHandler(routeTable, "logs", logs.routes, () => deps);

const event = (method: string, path: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 =>
  ({
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: "",
    headers,
    isBase64Encoded: false,
    requestContext: { requestId: `req-${path}`, http: { method, path, sourceIp: "203.0.113.7" } },
  }) as unknown as APIGatewayProxyEventV2;

const context = { awsRequestId: "aws-1", functionName: "f" } as unknown as Context;

const names = () => metrics.points.map((p) => p.name).sort();
const pointsOf = (name: MetricName) => metrics.named(name);

beforeEach(() => {
  metrics.clear();
  metrics.flushes = 0;
  storeUp = true;
});

describe("request metrics", () => {
  it("counts a tenant's request by route, with its latency, the tenant in metadata only", async () => {
    const res = await logsHandler(event("GET", "/logs/entity-types", { "svc-api-key": "good" }), context);

    expect(res.statusCode).toBe(200);
    expect(names()).toEqual(["Latency", "Requests"]);
    for (const point of metrics.points) {
      expect(point.dimensions).toEqual({ route: "listEntityTypes" });
      expect(point.metadata).toEqual({ tenant_id: TENANT, request_id: "req-/logs/entity-types" });
    }
    expect(pointsOf("Latency")[0]?.value).toBeGreaterThan(0);
    expect(metrics.flushes).toBe(1);
  });

  it("counts 4xx and 5xx by the route that answered them, and an unknown path as `unmatched`", async () => {
    const refused = await logsHandler(event("GET", "/logs/entity-types", { "svc-api-key": "bad" }), context);
    storeUp = false;
    const notReady = await systemHandler(event("GET", "/healthz"), context);
    const unknown = await systemHandler(event("GET", "/tokens-of/4242424242424242"), context);

    expect([refused.statusCode, notReady.statusCode, unknown.statusCode]).toEqual([401, 503, 404]);
    expect(pointsOf("Responses4xx").map((p) => p.dimensions)).toEqual([
      { route: "listEntityTypes" },
      { route: "unmatched" },
    ]);
    expect(pointsOf("Responses5xx").map((p) => p.dimensions)).toEqual([{ route: "healthz" }]);
    expect(pointsOf("Requests")).toHaveLength(3);
    expect(metrics.flushes).toBe(3);
  });

  it("never uses a dimension other than its metric's, nor a tenant id or a path as a dimension value", async () => {
    await logsHandler(event("GET", "/logs/entity-types", { "svc-api-key": "good" }), context);
    await systemHandler(event("GET", "/tokens-of/4242424242424242"), context);

    expect(metrics.points.length).toBeGreaterThan(0);
    for (const point of metrics.points) {
      expect(Object.keys(point.dimensions ?? {})).toEqual([...METRIC_SPEC[point.name].dimensions]);
      for (const value of Object.values(point.dimensions ?? {})) {
        expect(value).not.toContain(TENANT);
        expect(value).not.toContain("/");
        expect(value).not.toContain("4242");
      }
    }
  });
});
