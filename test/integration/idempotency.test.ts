import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything } from "#test/support/tokens.ts";

const svc = useService();

type Page = { pagination: { total_items: number }; data: { id: string }[] };

async function setup() {
  const api = client(svc.url);
  return { api, ...(await createTenant(api, svc.rootKey)) };
}

describe("idempotency (SVC-IDEMPOTENCY-KEY)", () => {
  it("stores the first success and replays it, marked as replayed, without doing the work twice", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "create-web-1" };
    const body = { name: "web", type: "public", permissions: ["token:create"] };

    const first = await api.post("/applications", { key: managementKey, body, headers });
    const second = await api.post("/applications", { key: managementKey, body, headers });
    const list = await api.get<Page>("/applications", { key: managementKey });

    expect(first.status).toBe(201);
    expect(first.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(list.body.pagination.total_items).toBe(2);
  });

  it("seals the answers of groups that never open token data under the tenant's answer keys, making no data or HMAC key", async () => {
    const { api, managementKey, tenantId } = await setup();
    const keyIds = async () =>
      (await scanTable(svc))
        .filter((item) => item.PK === `TENANT#${tenantId}` && String(item.SK).startsWith("DATAKEY#"))
        .map((item) => String(item.SK).slice("DATAKEY#".length))
        .sort();
    const headers = (key: string) => ({ "svc-idempotency-key": key });
    const writer = await appKey(api, managementKey, { type: "private", rules: revealEverything });
    const requests = [
      () =>
        api.post("/applications", {
          key: managementKey,
          body: { name: "web", type: "public", permissions: ["token:create"] },
          headers: headers("app-1"),
        }),
      () =>
        api.post("/tenants/self/invitations", {
          key: managementKey,
          body: { email: `answers${Date.now()}@example.com` },
          headers: headers("invite-1"),
        }),
      () => api.post("/transactions", { key: writer, headers: headers("txn-1") }),
    ];
    for (const request of requests) {
      const first = await request();
      const again = await request();
      expect(first.status).toBe(201);
      expect(again.headers.get("svc-idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
    }
    // Answer keys only: the functions of these routes are granted no other (GROUP_DATA_KEYS).
    const answerKeys = await keyIds();
    expect(answerKeys).toContain("answers-fingerprint");
    expect(answerKeys.some((id) => /^answers-k\d+$/.test(id))).toBe(true);
    expect(answerKeys.every((id) => id.startsWith("answers-"))).toBe(true);

    // A token route's answer: under the tenant's data keys, as its token data.
    const tokenized = () =>
      api.post("/tokens", { key: writer, body: { type: "token", data: "x" }, headers: headers("tok-1") });
    expect((await tokenized()).status).toBe(201);
    expect((await tokenized()).headers.get("svc-idempotent-replayed")).toBe("true");
    const after = await keyIds();
    expect(after).toContain("fingerprint");
    expect(after.some((id) => /^k\d+$/.test(id))).toBe(true);
  });

  it("answers 409, running nothing again, a retry of a record kept under the key as sent whose answer was sealed under a data key", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "create-web-before-answer-keys" };
    const body = { name: "web", type: "public", permissions: ["token:create"] };
    const deps = svc.service.deps;
    // The first run as a version before 27 Nov 2026 stored it: under the key as sent, its answer sealed under the
    // tenant's data key (which the applications function no longer holds).
    const answerSealer = deps.answerSealer;
    deps.answerSealer = Object.assign(Object.create(answerSealer) as typeof answerSealer, {
      seal: (binding: Parameters<typeof answerSealer.seal>[0], plaintext: string) =>
        deps.sealer.seal(binding, plaintext),
      fingerprint: (owner: string, scope: string, value: string) =>
        scope === "svc-idempotency-key"
          ? Promise.resolve(value)
          : answerSealer.fingerprint(owner, scope, value),
    });
    const first = await api.post("/applications", { key: managementKey, body, headers }).finally(() => {
      deps.answerSealer = answerSealer;
    });

    const retry = await api.post<{ detail: string }>("/applications", { key: managementKey, body, headers });
    const list = await api.get<Page>("/applications", { key: managementKey });

    expect(first.status).toBe(201);
    expect(retry.status).toBe(409);
    expect(retry.body.detail).toMatch(/took effect before an upgrade/);
    expect(list.body.pagination.total_items).toBe(2);
  });

  it("keeps the key as a keyed digest, never as sent (a key may be built from a card number)", async () => {
    const { api, managementKey } = await setup();
    const sent = "order-4111111111111111-attempt";
    const headers = { "svc-idempotency-key": sent };
    const body = { name: "web", type: "public", permissions: ["token:create"] };

    const first = await api.post("/applications", { key: managementKey, body, headers });
    const second = await api.post("/applications", { key: managementKey, body, headers });

    expect(second.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    const stored = JSON.stringify(await scanTable(svc));
    expect(stored).toContain("IDEMP#");
    expect(stored).not.toContain("4111111111111111");
  });

  it("answers a retry from a record kept under the key as sent (before keyed digests, 27 Nov 2026)", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "create-web-legacy" };
    const body = { name: "web", type: "public", permissions: ["token:create"] };
    // The first run as the previous version made it: the record and its sealed answer under the key as sent.
    const sealer = svc.service.deps.answerSealer;
    const fingerprint = sealer.fingerprint;
    sealer.fingerprint = (owner, scope, value) =>
      scope === "svc-idempotency-key"
        ? Promise.resolve(value)
        : fingerprint.call(sealer, owner, scope, value);
    const first = await api.post("/applications", { key: managementKey, body, headers }).finally(() => {
      sealer.fingerprint = fingerprint;
    });

    const retry = await api.post("/applications", { key: managementKey, body, headers });
    const list = await api.get<Page>("/applications", { key: managementKey });

    expect(retry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(list.body.pagination.total_items).toBe(2); // the management application and this one: not run again
  });

  it("keeps nothing new under a key as sent: a lapsed record of the previous version is let go", async () => {
    const { api, managementKey, tenantId } = await setup();
    const body = { name: "web", type: "public" };
    const probe = { "svc-idempotency-key": "probe" };
    expect((await api.post("/applications", { key: managementKey, body, headers: probe })).status).toBe(201);
    const mine = (await scanTable(svc)).find((i) => String(i.PK).startsWith(`IDEMP#tenant:${tenantId}:`));
    const pk = String(mine?.PK);
    // The previous version's record of a request that died in flight (its lease lapsed, no effect).
    const sent = "order-4242424242424242";
    const now = Math.floor(svc.service.deps.clock.now().getTime() / 1000);
    const legacy = {
      PK: `${pk.slice(0, pk.lastIndexOf("#") + 1)}${sent}`,
      SK: "META",
      entity: "idempotency",
    };
    const { dynamo, config } = svc.service.deps;
    const item = {
      ...legacy,
      state: "in_flight",
      claim_id: "old",
      lease_until: now - 60,
      expires_at: now + 600,
    };
    await dynamo.send(new PutCommand({ TableName: config.tableName, Item: item }));

    const retry = await api.post("/applications", {
      key: managementKey,
      body,
      headers: { "svc-idempotency-key": sent },
    });

    expect(retry.status).toBe(201);
    const kept = (await scanTable(svc)).filter((i) => String(i.PK).endsWith(`#${sent}`));
    expect(kept).toEqual([]); // the new run's record is under the digest, not the card number
  });

  it("stores nothing for a failed request, so a retry runs as new", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "retry-me" };

    const failed = await api.post("/applications", { key: managementKey, body: { name: "" }, headers });
    const retried = await api.post("/applications", {
      key: managementKey,
      body: { name: "fixed", type: "public" },
      headers,
    });

    expect(failed.status).toBe(400);
    expect(retried.status).toBe(201);
    expect(retried.headers.get("svc-idempotent-replayed")).toBeNull();
  });

  it("gives one success and 409s (or replays) to concurrent duplicates, creating one application", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "race" };

    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.post("/applications", { key: managementKey, body: { name: "raced", type: "public" }, headers }),
      ),
    );
    const list = await api.get<Page>("/applications", { key: managementKey });

    const originals = results.filter((r) => r.status === 201 && !r.headers.get("svc-idempotent-replayed"));
    expect(originals).toHaveLength(1);
    for (const r of results) expect([201, 409]).toContain(r.status);
    for (const r of results.filter((r) => r.status === 409)) expect(r.headers.get("retry-after")).toBe("1");
    expect(list.body.pagination.total_items).toBe(2);
  });

  it("makes two racing claims give exactly one winner (the in-flight marker is a conditional write)", async () => {
    const store = svc.service.deps.idempotency;
    const scope = `race-${Date.now()}`;

    const claims = await Promise.all(Array.from({ length: 8 }, () => store.claim(scope, "k", "sig")));

    expect(claims.filter((c) => c.outcome === "claimed")).toHaveLength(1);
    expect(claims.filter((c) => c.outcome === "in-flight")).toHaveLength(7);
  });

  it("ignores the key on GET and DELETE, scopes it per tenant, and forgets it after 24 hours", async () => {
    const { api, managementKey } = await setup();
    const other = await createTenant(api, svc.rootKey, "Other");
    const headers = { "svc-idempotency-key": "shared-key" };

    const get1 = await api.get("/applications", { key: managementKey, headers });
    const get2 = await api.get("/applications", { key: managementKey, headers });
    const mine = await api.post("/applications", {
      key: managementKey,
      body: { name: "a", type: "public" },
      headers,
    });
    const theirs = await api.post("/applications", {
      key: other.managementKey,
      body: { name: "b", type: "public" },
      headers,
    });
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 24 * 3600 + 1 } });
    const afterExpiry = await api.post("/applications", {
      key: managementKey,
      body: { name: "a", type: "public" },
      headers,
    });

    expect(get2.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(get1.status).toBe(200);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(afterExpiry.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(afterExpiry.body.id).not.toBe(mine.body.id);
  });

  it("refuses (422) a key reused on another method or path, and a malformed key", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "one-use" };
    const app = await api.post<{ id: string }>("/applications", {
      key: managementKey,
      body: { name: "a", type: "public" },
      headers,
    });

    const reused = await api.post(`/applications/${app.body.id}/keys`, { key: managementKey, headers });
    const malformed = await api.post("/applications", {
      key: managementKey,
      body: { name: "a", type: "public" },
      headers: { "svc-idempotency-key": "x".repeat(300) },
    });

    expect(reused.status).toBe(422);
    expect(reused.headers.get("content-type")).toContain("application/problem+json");
    expect(reused.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(malformed.status).toBe(400);
  });
});
