import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EmfMetrics } from "#shared/adapters/metrics/emf-metrics.ts";
import { METRIC, METRIC_SERVICE, METRIC_SPEC, type MetricName } from "#shared/observability/metric-names.ts";

/**
 * What CloudWatch reads: Powertools' EMF lines as the EMF adapter writes them at the end of an invocation. Each
 * line's dimension sets are `service` plus its metrics' own; the tenant id is a plain (metadata) key, never in a
 * dimension set, so it never multiplies the metrics (cardinality).
 */
const TENANT = "3f1c9a52-7d4e-4b1a-9c7e-0d2b8e6f4a11";

interface EmfDocument {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

let lines: string[];
beforeEach(() => {
  lines = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const documents = (): EmfDocument[] =>
  lines
    .flatMap((chunk) => chunk.split("\n"))
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));

function oneInvocation(metrics: EmfMetrics): void {
  const request = {
    dimensions: { route: "createToken" },
    metadata: { tenant_id: TENANT, request_id: "req-1" },
  };
  metrics.count(METRIC.requests, 1, request);
  metrics.timing(METRIC.latency, 12.5, request);
  metrics.count(METRIC.tokensCreated, 3, { metadata: { tenant_id: TENANT } });
  const destination = { dimensions: { status_class: "2xx" }, metadata: { tenant_id: TENANT } };
  metrics.timing(METRIC.proxyDestinationLatency, 40, destination);
  metrics.count(METRIC.proxyDestinationResponses, 1, destination);
  metrics.count(METRIC.rateLimitRefusals, 1, { metadata: { tenant_id: TENANT } });
}

describe("EMF output", () => {
  it("writes nothing until the flush, then one line per dimension set, in the namespace", () => {
    const metrics = new EmfMetrics({ namespace: "svc-vault-test" });
    oneInvocation(metrics);
    expect(documents()).toEqual([]);

    metrics.flush();
    const docs = documents();

    expect(docs.map((doc) => doc._aws.CloudWatchMetrics[0]?.Dimensions)).toEqual([
      [["service", "route"]],
      [["service"]],
      [["service", "status_class"]],
    ]);
    expect(docs[0]).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          {
            Namespace: "svc-vault-test",
            Dimensions: [["service", "route"]],
            Metrics: [
              { Name: "Requests", Unit: "Count" },
              { Name: "Latency", Unit: "Milliseconds" },
            ],
          },
        ],
      },
      service: METRIC_SERVICE,
      route: "createToken",
      tenant_id: TENANT,
      request_id: "req-1",
      Requests: 1,
      Latency: 12.5,
    });
    expect(docs[1]).toMatchObject({ TokensCreated: 3, RateLimitRefusals: 1, tenant_id: TENANT });
    // A second flush has nothing left to write.
    metrics.flush();
    expect(documents()).toHaveLength(3);
  });

  it("never puts the tenant id in a dimension set, and each metric only with its own dimensions", () => {
    const metrics = new EmfMetrics({ namespace: "svc-vault-test" });
    oneInvocation(metrics);
    metrics.flush();

    const docs = documents();
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      const [directive] = doc._aws.CloudWatchMetrics;
      for (const set of directive?.Dimensions ?? []) {
        expect(set).not.toContain("tenant_id");
        for (const name of set) expect(doc[name]).not.toBe(TENANT);
      }
      for (const metric of directive?.Metrics ?? []) {
        const spec = METRIC_SPEC[metric.Name as MetricName];
        expect(metric.Unit).toBe(spec.unit);
        expect(directive?.Dimensions).toEqual([["service", ...spec.dimensions]]);
      }
    }
  });

  it("sums a group's counts into one value and splits many timings over lines that all keep their dimensions", () => {
    const metrics = new EmfMetrics({ namespace: "svc-vault-test" });
    const options = { dimensions: { status_class: "2xx" }, metadata: { tenant_id: TENANT } };
    for (let i = 0; i < 250; i++) {
      metrics.count(METRIC.proxyDestinationResponses, 1, options);
      metrics.timing(METRIC.proxyDestinationLatency, i, options);
    }
    metrics.flush();

    const docs = documents();
    expect(docs.length).toBeGreaterThan(1);
    for (const doc of docs) {
      expect(doc._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([["service", "status_class"]]);
      expect(doc).toMatchObject({ status_class: "2xx", tenant_id: TENANT });
    }
    expect(docs.map((doc) => doc.ProxyDestinationResponses).filter((v) => v !== undefined)).toEqual([250]);
    const latencies = docs.flatMap((doc) => doc.ProxyDestinationLatency ?? []);
    expect(latencies).toHaveLength(250);
  });
});
