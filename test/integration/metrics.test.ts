import { describe, expect, it } from "vitest";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import type { MetricName } from "#shared/observability/metric-names.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

/**
 * The service's metrics as a tenant's requests produce them, through HTTP, recorded by the recording adapter in
 * place of local mode's debug lines: counts per use case, the destination's class, requests by route, and
 * never a tenant id as a dimension nor token data or a key anywhere in a metric.
 */
const metrics = new RecordingMetrics();
const svc = useService({ allowPrivateDestinations: true, metrics });

const destination = useLocalServer((req, res) => {
  res.writeHead(req.url?.includes("/down") ? 503 : 200, { "content-type": "application/json" });
  res.end("{}");
});

const total = (name: MetricName) => metrics.named(name).reduce((sum, point) => sum + point.value, 0);

describe("metrics through HTTP", () => {
  it("counts the tokens each use case created, read and detokenized, the tenant in metadata", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    metrics.clear();

    const batch = await api.post<TokenBody[]>("/tokenize", {
      key: owner,
      body: [
        { type: "token", data: "a" },
        { type: "token", data: "b" },
        { type: "card_number", data: VISA },
      ],
    });
    const one = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "c" } });
    const read = await api.get(`/tokens/${one.body.id}`, { key: owner });
    const listed = await api.get(`/tokens?type=token`, { key: owner });
    const detokenized = await api.post("/detokenize", {
      key: owner,
      body: { a: `{{ ${batch.body[0]?.id} }}`, card: `{{ ${batch.body[2]?.id} }}` },
    });

    expect([batch.status, one.status, read.status, listed.status, detokenized.status]).toEqual([
      201, 201, 200, 200, 200,
    ]);
    expect(total("TokensCreated")).toBe(4);
    // One count per use case, not one per token: the batch is one point of 3.
    expect(metrics.named("TokensCreated").map((p) => p.value)).toEqual([3, 1]);
    expect(total("TokensRead")).toBe(1 + 3);
    expect(total("TokensDetokenized")).toBe(2);
    for (const name of ["TokensCreated", "TokensRead", "TokensDetokenized"] as const)
      for (const point of metrics.named(name)) {
        expect(point.metadata).toEqual({ tenant_id: tenant.tenantId });
        expect(point.dimensions).toBeUndefined();
      }
    expect(
      metrics
        .named("Requests")
        .map((p) => p.dimensions?.route)
        .sort(),
    ).toEqual(["createToken", "detokenize", "getToken", "listTokens", "tokenize"]);
  });

  it("counts tokens created in a transaction when it commits, and none for one rolled back", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const open = async () => (await api.post<{ id: string }>("/transactions", { key: owner })).body.id;
    const createIn = (transaction: string, data: string) =>
      api.post<TokenBody>("/tokens", {
        key: owner,
        body: { type: "token", data },
        headers: { "svc-transaction-id": transaction },
      });
    const undone = await open();
    const kept = await open();
    metrics.clear();

    const created = [
      await createIn(undone, "x"),
      await createIn(undone, "y"),
      await createIn(kept, "z"),
      await createIn(kept, "w"),
    ];
    const beforeCommit = total("TokensCreated");
    const rolledBack = await api.post(`/transactions/${undone}/rollback`, { key: owner });
    const committed = await api.post(`/transactions/${kept}/commit`, { key: owner });

    expect(created.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect([rolledBack.status, committed.status]).toEqual([200, 200]);
    expect(beforeCommit).toBe(0);
    // The committed transaction's two tokens, as one point; the rolled-back one's never.
    expect(metrics.named("TokensCreated").map((p) => p.value)).toEqual([2]);
  });

  it("counts the tokens of a batch the sweep finished, its request having died past its commit point", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    // More tokens than one write holds: the batch commits in stages, and the request dies after the commit point.
    const body = Array.from({ length: 120 }, (_, i) => ({ type: "token", data: `staged ${i}` }));
    const transactions = svc.service.deps.transactions as unknown as Record<string, unknown>;
    const rollForward = transactions.rollForward;
    transactions.rollForward = async () => {
      transactions.rollForward = rollForward;
      throw new Error("simulated crash");
    };
    metrics.clear();

    const died = await api.post("/tokenize", { key: owner, body });
    const countedByTheRequest = total("TokensCreated");
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 20 * 60 } });
    await expect.poll(() => total("TokensCreated")).toBe(120);

    expect(died.status).toBe(500);
    expect(countedByTheRequest).toBe(0);
    // Counted as each of the roll-forward's writes lands (review r3b), once in all.
    expect(metrics.named("TokensCreated").reduce((sum, p) => sum + p.value, 0)).toBe(120);
  });

  it("records a proxy destination's round trip by status class, and the invocation's answer by route", async () => {
    const proxy = await createOpenProxy(svc.url, svc.rootKey, `${destination.url}/`);
    metrics.clear();

    const up = await proxy.api.post("/proxy/ok", { headers: { "svc-proxy-key": proxy.key }, body: {} });
    const down = await proxy.api.post("/proxy/down", { headers: { "svc-proxy-key": proxy.key }, body: {} });

    expect([up.status, down.status]).toEqual([200, 503]);
    expect(metrics.named("ProxyDestinationResponses").map((p) => p.dimensions)).toEqual([
      { status_class: "2xx" },
      { status_class: "5xx" },
    ]);
    expect(metrics.named("ProxyDestinationLatency").map((p) => p.kind)).toEqual(["timing", "timing"]);
    // The destination's 503 is the invocation's answer too: counted as the proxy route's 5xx.
    expect(metrics.named("Responses5xx").map((p) => p.dimensions)).toEqual([
      { route: "invokeProxyPostPath" },
    ]);
  });

  it("attack: no tenant id in a dimension, and no card number or key anywhere in a metric", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:read"] });
    const proxy = await createOpenProxy(svc.url, svc.rootKey, `${destination.url}/`);
    metrics.clear();

    const card = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2031 } },
    });
    await api.get(`/tokens/${card.body.id}`, { key: reader });
    await api.get(`/tokens/${VISA}`, { key: owner });
    await api.post(`/proxy/${VISA}`, { headers: { "svc-proxy-key": proxy.key }, body: { n: VISA } });

    const recorded = JSON.stringify(metrics.points);
    expect(metrics.points.length).toBeGreaterThan(0);
    for (const secret of [VISA, owner, reader, proxy.key, tenant.managementKey, svc.rootKey])
      expect(recorded).not.toContain(secret);
    for (const point of metrics.points)
      for (const value of Object.values(point.dimensions ?? {})) {
        expect(value).not.toBe(tenant.tenantId);
        expect(value).not.toContain("/");
      }
  });
});
