import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type LocalService, startLocalService } from "#functions/local.ts";
import { HEALTH_CACHE_MS } from "#shared/domain/store-health.ts";
import { type StoreLink, storeLink } from "#test/support/outage.ts";
import { tenantWithOwner, VISA } from "#test/support/tokens.ts";

/**
 * The store goes away under a running service (issue 18 point 3): a forwarder between the service and the run's
 * DynamoDB Local is cut. Every request that needs the store answers 503 problem+json with Retry-After (a client
 * knows to retry, with its idempotency key), never a generic 500; /healthz says so too, and recovers.
 */
let link: StoreLink;
let service: LocalService;
const rootKey = `key_root_test_${randomUUID()}`;

beforeAll(async () => {
  link = await storeLink(inject("dynamodbEndpoint"));
  service = await startLocalService({
    port: 0,
    rootKey,
    dataDir: join(tmpdir(), `svc-test-${process.pid}`),
    masterKeyFile: join(tmpdir(), `svc-test-${process.pid}.master.key`),
    dynamodbEndpoint: link.endpoint,
    testClock: true,
    tableName: `svc-test-${randomUUID()}`,
  });
});
afterAll(async () => {
  await service?.stop();
  await link?.close();
});

/** The health answer of a moment later than the cached one: the service clock moves, no real waiting. */
async function health(): Promise<Response> {
  service.deps.testClock?.advance(HEALTH_CACHE_MS / 1000 + 1);
  return fetch(`${service.url}/healthz`);
}

async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  const problem = (await res.json()) as { status: number; type: string; detail: string };
  expect(problem.status).toBe(503);
  expect(problem.type).not.toContain("internal-error");
}

describe("a store outage under a live service", () => {
  it("answers 503 with Retry-After while the store refuses connections, and serves again once it is back", async () => {
    const { api, owner } = await tenantWithOwner({ url: service.url, rootKey });
    const stored = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: { type: "card", data: { number: VISA, expiration_month: 4, expiration_year: 2031 } },
    });
    expect(stored.status).toBe(201);
    expect((await health()).status).toBe(200);

    link.cut("refuse");
    const headers = { "svc-api-key": owner, "content-type": "application/json" };
    const write = await fetch(`${service.url}/tokens`, {
      method: "POST",
      headers: { ...headers, "svc-idempotency-key": randomUUID() },
      body: JSON.stringify({ type: "token", data: "outage" }),
    });
    const read = await fetch(`${service.url}/tokens/${stored.body.id}`, { headers });
    const healthDuring = await health();

    await expectUnavailable(write);
    await expectUnavailable(read);
    await expectUnavailable(healthDuring);

    link.restore();
    expect((await health()).status).toBe(200);
    expect((await api.get(`/tokens/${stored.body.id}`, { key: owner })).status).toBe(200);
  });

  it("/healthz answers 503 within its short probe timeout while the store accepts but never answers", async () => {
    link.cut("hang");
    const during = await health();
    link.restore();

    await expectUnavailable(during);
    expect((await health()).status).toBe(200);
  });

  it("caches the probe's answer for about a second of the service clock", async () => {
    expect((await health()).status).toBe(200);

    link.cut("refuse");
    // The same moment of the service clock: the answer of the probe just made stands.
    const cached = await fetch(`${service.url}/healthz`);
    const probedAgain = await health();
    link.restore();

    expect(cached.status).toBe(200);
    expect(probedAgain.status).toBe(503);
    expect((await health()).status).toBe(200);
  });
});
