import { describe, expect, it } from "vitest";
import { processRewrapPage } from "#shared/domain/keys/rewrap.ts";
import { type Client, client, createTenant } from "#test/support/http.ts";
import type { RewrapJob } from "#test/support/keys.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import {
  appKey,
  revealEverything,
  type TokenBody,
  type TokenPage,
  tenantWithOwner,
} from "#test/support/tokens.ts";

/**
 * Attack: one public key stalls every tenant of a local service. Each expression of a create (mask strings,
 * fingerprint, search indexes, id) had 100 ms of its own, so one create could hold the process for over a
 * second, and a handful of them for seconds, for every tenant alike. Now all the renders of a request share one
 * budget, and each tenant has a share of the process's render time: spent, its requests answer 429 while other
 * tenants' renders go on.
 *
 * The service measures render time with a meter that counts work here (1.5 ms per reading; a render reads it
 * at its start, its end and every 16th template, filter or loop step), not with a clock, so a loaded machine
 * changes nothing.
 */
Object.assign(process.env, {
  SVC_EXPRESSION_REQUEST_MS: "100",
  // Refills so slowly that the test's own duration cannot matter; only moving the test clock refills.
  SVC_EXPRESSION_TENANT_MS_PER_SECOND: "1",
  SVC_EXPRESSION_TENANT_BURST_MS: "600",
});
let readings = 0;
const svc = useService({ renderMeter: () => ++readings * 1.5 });
const mergePatch = { "content-type": "application/merge-patch+json" };

/** About 40 ms of the meter: 100 loop steps with a filter each (about 400 steps, 27 readings). */
const HEAVY = "{% for i in (1..100) %}{{ i | plus: 1 }}{% endfor %}";
/** Thirteen of them: about 520 ms, over five times the request's budget, each one well within it. */
const THIRTEEN = Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`f${i}`, HEAVY]));

async function tenant(api: Client) {
  const { managementKey } = await createTenant(api, svc.rootKey);
  const pub = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
  const reader = await appKey(api, managementKey, {
    type: "private",
    rules: [{ priority: 1, container: "/", transform: "mask", permissions: ["token:read", "token:update"] }],
  });
  return { managementKey, pub, reader };
}

describe("attack: one tenant's expressions stall the service", () => {
  it("gives all the expressions of one request one budget, not one each", async () => {
    const api = client(svc.url);
    const { pub } = await tenant(api);

    const one = await api.post("/tokens", {
      key: pub,
      body: { type: "token", data: "x", mask: { a: HEAVY } },
    });
    const thirteen = await api.post<{ errors?: Record<string, string[]> }>("/tokens", {
      key: pub,
      body: { type: "token", data: "x", mask: THIRTEEN },
    });
    const inSearchIndexes = await api.post("/tokens", {
      key: pub,
      body: { type: "token", data: "x", search_indexes: Array.from({ length: 10 }, () => HEAVY) },
    });

    expect(one.status).toBe(201);
    expect(thirteen.status).toBe(400);
    expect(JSON.stringify(thirteen.body)).toContain("Expression exceeded its time limit");
    expect(inSearchIndexes.status).toBe(400);
  });

  it("charges parsing as rendering: 1,000 distinct detokenization filters spend the request's budget", async () => {
    // A parse cannot be interrupted and its author sets its cost; unmetered, 1,000 long filter chains in one
    // /proxy or /detokenize body held the process 0.8 s per request before any token was read (review of 27 Nov
    // 2026). Here each parse draws one meter interval (1.5 ms) from the request's 100 ms.
    const api = client(svc.url);
    const { managementKey, pub } = await tenant(api);
    const reader = await appKey(api, managementKey, { type: "private", permissions: ["token:read"] });
    const token = await api.post<{ id: string }>("/tokens", { key: pub, body: { type: "token", data: "x" } });
    const filters = (n: number, salt: string) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`e${i}`, `{{ ${token.body.id} | append: "${salt}${i}" }}`]),
      );

    const few = await api.post("/detokenize", { key: reader, body: filters(10, "a") });
    const many = await api.post<{ detail: string }>("/detokenize", { key: reader, body: filters(1000, "b") });

    expect(few.status).toBe(200);
    expect(many.status).toBe(400);
    expect(many.body.detail).toContain("Expression exceeded its time limit");
  });

  it("shows the items of a list past the request's budget redacted, and answers the list", async () => {
    const api = client(svc.url);
    const { pub, reader } = await tenant(api);
    for (let i = 0; i < 6; i++) {
      const created = await api.post("/tokens", {
        key: pub,
        body: { type: "token", data: `v${i}`, mask: { a: HEAVY } },
      });
      expect(created.status).toBe(201);
    }

    const list = await api.get<TokenPage>("/tokens", { key: reader });

    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(6);
    const masked = list.body.data.filter((t) => t.data !== undefined).length;
    // 100 ms fit two masks of about 40 ms: the third stops at the limit, the rest find the budget spent.
    expect(masked).toBeGreaterThanOrEqual(1);
    expect(masked).toBeLessThan(6);
  });

  it("gives a reaction's detokenization filters one budget, not one each", async () => {
    const reactor = await createReactor(svc, {
      formula: { name: "Echo", code: "module.exports = async (req) => ({ raw: req.args });" },
      permissions: [],
      // Reading revealed: a key that may only use the data applies formatting filters alone (detokenize.ts).
      rules: revealEverything,
    });
    const { api, app } = reactor;
    const token = await api.post<TokenBody>("/tokens", { key: app.key, body: { type: "token", data: "42" } });
    // About 40 ms each (a 16th of about 400 loop steps): distinct filters, so each is rendered.
    const heavy = (n: number) =>
      `{{ token: ${token.body.id} | pad_left: ${200 + n} | split: '' | where: 'x' }}`;
    const react = (count: number) =>
      api.post(`/reactors/${reactor.reactorId}/react`, {
        key: app.key,
        body: { args: Object.fromEntries(Array.from({ length: count }, (_, n) => [`v${n}`, heavy(n)])) },
      });

    const one = await react(1);
    const eight = await react(8);

    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(eight.status).toBe(400);
    expect(JSON.stringify(eight.body)).toContain("could not be evaluated");
  });

  it("refuses a tenant whose share is spent (429), while another tenant's renders go on", async () => {
    const api = client(svc.url);
    const flooder = await tenant(api);
    const bystander = await tenant(api);
    const token = async (t: { pub: string }) =>
      (
        await api.post<TokenBody>("/tokens", {
          key: t.pub,
          // upcase is liquidjs's: the mask is rendered (a vault filter alone is read directly, plain-path.ts).
          body: { type: "token", data: "4242", mask: "{{ data | reveal_last: 2 | upcase }}" },
        })
      ).body.id;
    const flooderToken = await token(flooder);
    const bystanderToken = await token(bystander);

    // Eight creates of 13 heavy expressions: each spends its request's 100 ms, 800 ms in all, past the 600.
    for (let i = 0; i < 8; i++) {
      const res = await api.post("/tokens", {
        key: flooder.pub,
        body: { type: "token", data: "x", mask: THIRTEEN },
      });
      expect([400, 429]).toContain(res.status);
    }
    const flooderRead = await api.get(`/tokens/${flooderToken}`, { key: flooder.reader });
    const flooderCreate = await api.post("/tokens", { key: flooder.pub, body: { type: "token", data: "y" } });
    const bystanderRead = await api.get<TokenBody>(`/tokens/${bystanderToken}`, { key: bystander.reader });
    const bystanderPatch = await api.patch<TokenBody>(`/tokens/${bystanderToken}`, {
      key: bystander.reader,
      headers: mergePatch,
      body: { data: "4343" },
    });

    expect(flooderRead.status).toBe(429);
    expect(Number(flooderRead.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(flooderRead.headers.get("content-type")).toContain("application/problem+json");
    expect(flooderCreate.status).toBe(429);
    expect(bystanderRead.status).toBe(200);
    expect(bystanderRead.body.data).toBe("XX42");
    expect(bystanderPatch.status).toBe(200);
    expect(bystanderPatch.body.data).toBe("XX43");

    // The share refills with the service's clock.
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });
    const later = await api.get<TokenBody>(`/tokens/${flooderToken}`, { key: flooder.reader });
    expect(later.status).toBe(200);
    expect(later.body.data).toBe("XX42");
  });
});

describe("attack: a rewrap renders a tenant's expressions outside its render share", () => {
  // A rewrap renders each token's fingerprint and search indexes again: before 28 Nov 2026 outside any request,
  // a budget per call and no tenant share, so a tenant whose share was spent had all of them rendered again for
  // free at every rotate + rewrap, on the process every tenant shares.
  it("charges a rewrap's renders to the tenant's share: none run while it is spent", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc, revealEverything);
    const mgt = tenant.managementKey;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api.post<TokenBody>("/tokens", {
        key: owner,
        body: { type: "token", data: `v${i}`, search_indexes: [`${HEAVY}{{ data }}`] },
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
      const started = await api.post<RewrapJob>("/tenants/self/keys/rewrap", { key: mgt });
      expect(started.status).toBe(202);
      const page = { kind: "rewrap" as const, tenantId: tenant.tenantId, jobId: started.body.id, page: 0 };

      const before = readings;
      await processRewrapPage(svc.service.deps, page).catch(() => undefined);
      // Four tokens' fingerprints and heavy search indexes: none of them may run on a spent share.
      expect(readings - before).toBe(0);

      // Refilled, the rewrap goes on and finishes.
      svc.service.deps.testClock?.advance(3600);
      await processRewrapPage(svc.service.deps, page);
      const job = await api.get<RewrapJob>(`/tenants/self/keys/rewrap/${started.body.id}`, { key: mgt });
      expect(job.body.done).toBeGreaterThanOrEqual(4);
    } finally {
      restart();
    }
  });
});
