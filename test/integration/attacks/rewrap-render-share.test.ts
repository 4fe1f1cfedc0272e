import { describe, expect, it } from "vitest";
import { processRewrapPage } from "#shared/domain/keys/rewrap.ts";
import { useService } from "#test/support/service.ts";
import { revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Attack: a rewrap's renders escape the tenant's render share. Every request's renders draw from its tenant's
 * share of the process's render time (render-budget.ts), but the rewrap worker renders each token's fingerprint
 * expression and search indexes again with the engine outside any request: a budget of its own per call, no
 * tenant share, no turn of the render slot. A tenant pays for its tokens' expressions once, spread over time, at
 * their creates; then every rotate + rewrap (its own keys, a management key) renders all of them again for free,
 * back to back on the process every other tenant shares, however spent its share is.
 *
 * The meter counts work (1.5 ms per reading), not time, as in expression-budget.test.ts.
 */
Object.assign(process.env, {
  SVC_EXPRESSION_REQUEST_MS: "100",
  // Refills so slowly that the test's own duration cannot matter; only moving the test clock refills.
  SVC_EXPRESSION_TENANT_MS_PER_SECOND: "1",
  SVC_EXPRESSION_TENANT_BURST_MS: "600",
});
let readings = 0;
const svc = useService({ renderMeter: () => ++readings * 1.5 });

/** About 40 ms of the meter (as expression-budget.test.ts). */
const HEAVY = "{% for i in (1..100) %}{{ i | plus: 1 }}{% endfor %}{{ data }}";
const THIRTEEN = Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`f${i}`, HEAVY]));

interface Job {
  id: string;
  status: string;
  done: number;
}

describe("attack: a rewrap renders a tenant's expressions outside its render share", () => {
  it("charges a rewrap's renders to the tenant's share: none run while it is spent", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc, revealEverything);
    const mgt = tenant.managementKey;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api.post<TokenBody>("/tokens", {
        key: owner,
        body: { type: "token", data: `v${i}`, search_indexes: [HEAVY] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.id);
    }
    // Spend the rest of the share: its requests' renders are now refused (429).
    let status = 0;
    for (let i = 0; i < 10 && status !== 429; i++)
      status = (await api.post("/tokens", { key: owner, body: { type: "token", data: "x", mask: THIRTEEN } }))
        .status;
    expect(status).toBe(429);
    const read = await api.get(`/tokens/${ids[0]}`, { key: owner, headers: {} });
    expect(read.status).toBe(200); // a revealed read renders nothing

    const rewraps = svc.service.deps.rewrapQueue;
    await rewraps.stop(); // the test runs the page itself
    let restarted = false;
    const restart = () => {
      if (!restarted) rewraps.start((page) => processRewrapPage(svc.service.deps, page));
      restarted = true;
    };
    try {
      expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
      const started = await api.post<Job>("/tenants/self/keys/rewrap", { key: mgt });
      expect(started.status).toBe(202);
      const page = { kind: "rewrap" as const, tenantId: tenant.tenantId, jobId: started.body.id, page: 0 };

      const before = readings;
      await processRewrapPage(svc.service.deps, page).catch(() => undefined);
      // Four tokens' fingerprints and heavy search indexes: none of them may run on a spent share.
      expect(readings - before).toBe(0);

      // Refilled, the rewrap goes on and finishes.
      svc.service.deps.testClock?.advance(3600);
      await processRewrapPage(svc.service.deps, page);
      const job = await api.get<Job>(`/tenants/self/keys/rewrap/${started.body.id}`, { key: mgt });
      expect(job.body.done).toBeGreaterThanOrEqual(4);
    } finally {
      restart();
    }
  });
});
