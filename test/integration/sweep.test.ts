import { GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { dueShardOf, tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService();
const HOUR = 3_600_000;
const mergePatch = { "content-type": "application/merge-patch+json" };

async function rawToken(tenantId: string, id: string) {
  const out = await svc.service.deps.dynamo.send(
    new GetCommand({ TableName: svc.service.deps.config.tableName, Key: tokenKeys.token(tenantId, id) }),
  );
  return out.Item;
}

/**
 * A sweep run limited to `ms` of a clock that moves 10 ms at every reading: it stands in for the sweep function's
 * time running out, whatever the machine's speed.
 */
function sweepWithin(ms: number) {
  let now = svc.service.deps.clock.now().getTime();
  const stopBy = new Date(now + ms);
  const clock = {
    now: () => {
      now += 10;
      return new Date(now);
    },
  };
  return sweepExpired({ ...svc.service.deps, clock }, { stopBy });
}

/** A tenant and a private key of it that may create tokens. */
async function tenant() {
  const api = client(svc.url);
  const { managementKey, tenantId } = await createTenant(api, svc.rootKey);
  const key = await appKey(api, managementKey, { type: "private", permissions: ["token:create"] });
  return { key, tenantId };
}

/** `count` tokens in one POST /tokenize, all expiring at `expires_at`: their ids. */
async function tokenize(key: string, count: number, expires_at: string) {
  const entries = Array.from({ length: count }, (_, i) => [
    `t${i}`,
    { type: "token", data: `${i}`, expires_at },
  ]);
  const res = await client(svc.url).post<Record<string, { id: string }>>("/tokenize", {
    key,
    body: Object.fromEntries(entries),
  });
  expect(res.status).toBe(201);
  return Object.values(res.body).map((token) => token.id);
}

describe("expiry sweep", () => {
  it("starts at the hour its table was created: the first run reads this hour, not two days back", async () => {
    // Before: a new table's first run looked back 48 hours, 49 hours × 32 shards of reads for nothing.
    const hourBefore = Math.floor(svc.service.deps.clock.now().getTime() / HOUR) * HOUR - HOUR;
    expect(await svc.service.deps.sweep.lastCompletedHour()).toBe(new Date(hourBefore).toISOString());
  });

  it("sweeps an hour's items in the order they fell due, whichever tenant's and shard", async () => {
    // Before: shard by shard, and in each by kind then tenant id: a tenant created earlier (a lower id) with 200
    // tokens due went before another's 5 due a minute sooner (review of 27 Nov 2026).
    const [busy, other] = [await tenant(), await tenant()];
    const at = (seconds: number) =>
      new Date(svc.service.deps.clock.now().getTime() + seconds * 1000).toISOString();
    for (const _ of [0, 1]) await tokenize(busy.key, 100, at(120));
    const soonest = await tokenize(other.key, 5, at(60));
    svc.service.deps.testClock?.advance(600);

    const limited = await sweepWithin(1_500);

    expect(limited.tokensDeleted).toBeLessThan(205); // the run's limit came first
    for (const id of soonest) expect(await rawToken(other.tenantId, id)).toBeUndefined();
    const [busyId] = await tokenize(busy.key, 1, at(3600));
    expect(await rawToken(busy.tenantId, busyId as string)).toBeDefined(); // ids are read right
    await sweepExpired(svc.service.deps);
  });

  it("serves another tenant's due items in a limited run, although a flood of one tenant's fell due a second sooner", async () => {
    // Before: earliest due first across every shard, so the flood held the bystander's items out of every
    // time-limited run until all of it was gone (DoS review of 28 Nov 2026). Tenants sharing a due shard still
    // wait on each other: the bystander is one whose shard differs (31 tenants in 32).
    const flooder = await tenant();
    let bystander = await tenant();
    while (dueShardOf(bystander.tenantId) === dueShardOf(flooder.tenantId)) bystander = await tenant();
    const at = (seconds: number) =>
      new Date(svc.service.deps.clock.now().getTime() + seconds * 1000).toISOString();
    for (const _ of [0, 1]) await tokenize(flooder.key, 100, at(60));
    const bystanders = await tokenize(bystander.key, 5, at(61));
    svc.service.deps.testClock?.advance(600);

    const limited = await sweepWithin(1_000);

    expect(limited.tokensDeleted).toBeLessThan(205); // the run's limit came first
    for (const id of bystanders) expect(await rawToken(bystander.tenantId, id)).toBeUndefined();
    await sweepExpired(svc.service.deps);
  });

  it("serves another tenant's items due in the next hour while one tenant's backlog of an earlier hour lasts", async () => {
    // Each shard walks the hours on its own: when the due index was walked hour by hour, each hour to its end, a tenant
    // whose flood of items falls due just before an hour ends held (before 28 Nov 2026) every other tenant's items of every later
    // hour out of each time-limited run until all of it is gone, whatever their shards.
    const flooder = await tenant();
    let bystander = await tenant();
    while (dueShardOf(bystander.tenantId) === dueShardOf(flooder.tenantId)) bystander = await tenant();
    // Ten minutes into an hour, everything before swept.
    const clock = svc.service.deps.testClock;
    const now0 = svc.service.deps.clock.now().getTime();
    clock?.advance((HOUR - (now0 % HOUR) + 600_000) / 1000); // seconds
    await sweepExpired(svc.service.deps);
    const nextHour = Math.ceil(svc.service.deps.clock.now().getTime() / HOUR) * HOUR;
    for (const _ of [0, 1]) await tokenize(flooder.key, 100, new Date(nextHour - 30_000).toISOString());
    const bystanders = await tokenize(bystander.key, 5, new Date(nextHour + 30_000).toISOString());
    clock?.advance(HOUR / 1000);
    let deleted = 0;
    for (const _ of [0, 1]) deleted += (await sweepWithin(1_000)).tokensDeleted;

    expect(deleted).toBeLessThan(205); // the runs' limit came first
    for (const id of bystanders) expect(await rawToken(bystander.tenantId, id)).toBeUndefined();
    await sweepExpired(svc.service.deps);
  }, 180_000);

  it("deletes an expired token written to between its read and its delete (a rewrap's reseal), not drops it", async () => {
    // Before: the delete's version condition failed, the due entry was dropped all the same, and the token stayed
    // until the TTL backstop, 49 h (review of 27 Nov 2026).
    const api = client(svc.url);
    const { managementKey, tenantId } = await createTenant(api, svc.rootKey);
    const pub = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
    const soon = new Date(svc.service.deps.clock.now().getTime() + 60_000).toISOString();
    const token = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "x", expires_at: soon },
    });
    svc.service.deps.testClock?.advance(120);
    const { dynamo, config } = svc.service.deps;
    const send = dynamo.send.bind(dynamo);
    let bumped = 0;
    const spy = vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
      const deletesIt =
        command instanceof TransactWriteCommand &&
        JSON.stringify(command.input).includes(`"${token.body.id}"`);
      if (deletesIt && bumped++ === 0)
        await send(
          new UpdateCommand({
            TableName: config.tableName,
            Key: tokenKeys.token(tenantId, token.body.id),
            UpdateExpression: "SET #version = #version + :one",
            ExpressionAttributeNames: { "#version": "version" },
            ExpressionAttributeValues: { ":one": 1 },
          }),
        );
      return send(command as never);
    }) as never);
    try {
      const swept = await sweepExpired(svc.service.deps);
      expect(bumped).toBeGreaterThan(0);
      expect(swept.tokensDeleted).toBeGreaterThanOrEqual(1);
    } finally {
      spy.mockRestore();
    }
    expect(await rawToken(tenantId, token.body.id)).toBeUndefined();
  });

  it("puts off an item that fails, and goes on with every other tenant's (it stopped the run, at every run)", async () => {
    const api = client(svc.url);
    const tenants = [await createTenant(api, svc.rootKey), await createTenant(api, svc.rootKey)];
    const soon = new Date(svc.service.deps.clock.now().getTime() + 60_000).toISOString();
    const [failing, other] = await Promise.all(
      tenants.map(async ({ managementKey }) => {
        const pub = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
        const body = { type: "token", data: "x", expires_at: soon };
        return (await api.post<TokenBody>("/tokens", { key: pub, body })).body.id;
      }),
    );
    svc.service.deps.testClock?.advance(120);
    const sweep = svc.service.deps.sweep;
    const expire = sweep.expireToken.bind(sweep);
    let tries = 0;
    sweep.expireToken = (item, now, audit) => {
      if (item.tokenId !== failing) return expire(item, now, audit);
      tries += 1;
      return tries <= 2 ? Promise.reject(new TypeError("a bug")) : expire(item, now, audit);
    };
    const run = async (seconds: number) => {
      svc.service.deps.testClock?.advance(seconds);
      return sweepExpired(svc.service.deps);
    };
    try {
      expect((await run(0)).itemFailures).toEqual(["TypeError"]); // the kind only: a message may hold anything
      expect(await rawToken(tenants[1]?.tenantId as string, other as string)).toBeUndefined();
      await run(901); // tried again 15 minutes later: fails again, put off 30 minutes
      await run(901);
      expect(tries).toBe(2);
      await run(900);
      expect(tries).toBe(3);
    } finally {
      sweep.expireToken = expire;
    }
    expect(await rawToken(tenants[0]?.tenantId as string, failing as string)).toBeUndefined();
  });

  it("gives a deleted tenant's purge its share of a run limited in time, whatever another tenant's due items", async () => {
    // Before: the purge came after every due item of the run, so one tenant's 2,000 expiring tokens kept another
    // tenant's purge from starting in a run of the function (review of 27 Nov 2026).
    const api = client(svc.url);
    const busy = await createTenant(api, svc.rootKey);
    const owner = await appKey(api, busy.managementKey, {
      type: "private",
      permissions: ["token:create", "token:read"],
      rules: revealEverything,
    });
    const soon = new Date(svc.service.deps.clock.now().getTime() + 120_000).toISOString();
    for (const batch of [0, 1]) {
      const entries = Array.from({ length: 100 }, (_, i) => [
        `t${i}`,
        { type: "token", data: `${batch}-${i}`, expires_at: soon },
      ]);
      expect((await api.post("/tokenize", { key: owner, body: Object.fromEntries(entries) })).status).toBe(
        201,
      );
    }
    const gone = await createTenant(api, svc.rootKey);
    expect((await api.delete("/tenants/self", { key: gone.managementKey })).status).toBe(200);
    svc.service.deps.testClock?.advance(3600); // past the tokens' expiry and the purge's grace period
    const purging = async () => (await svc.service.deps.tenantPurge.pending()).map((p) => p.tenantId);
    expect(await purging()).toContain(gone.tenantId);

    const limited = await sweepWithin(2_000);

    expect(await purging()).not.toContain(gone.tenantId);
    expect(limited.tokensDeleted).toBeLessThan(200); // the rest is the next run's
    await sweepExpired(svc.service.deps);
    const left = await api.get<{ pagination: { total_items: number } }>("/tokens", { key: owner });
    expect(left.body.pagination.total_items).toBe(0);
  });

  it("deletes expired tokens and removes cvcs after an hour, keeping the other card fields", async () => {
    const api = client(svc.url);
    const { managementKey, tenantId } = await createTenant(api, svc.rootKey);
    const pub = await appKey(api, managementKey, {
      type: "public",
      permissions: ["token:create", "token:update"],
    });
    const in10Minutes = new Date(svc.service.deps.clock.now().getTime() + 600_000).toISOString();
    const expiring = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "bye", expires_at: in10Minutes },
    });
    const extended = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "token", data: "stays", expires_at: in10Minutes },
    });
    await api.patch(`/tokens/${extended.body.id}`, {
      key: pub,
      headers: mergePatch,
      body: { expires_at: "2099-01-01T00:00:00Z" },
    });
    const card = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card", data: { number: VISA, cvc: "123", expiration_month: 1, expiration_year: 2031 } },
    });
    const numericCvc = await api.post<TokenBody>("/tokens", {
      key: pub,
      body: { type: "card", data: { number: VISA, cvc: 456 } },
    });
    // Only a card's cvc lives an hour: another type's `cvc` field is data (review of round 7: it was lost too).
    const reader = await appKey(api, managementKey, { type: "private", rules: revealEverything });
    const customer = { customer: "c-1", cvc: "customer value score 7" };
    const other = await api.post<TokenBody>("/tokens", {
      key: reader,
      body: { type: "token", data: customer },
    });
    const twin = await api.post<TokenBody>("/tokens", {
      key: reader,
      body: { type: "token", data: { ...customer, cvc: "another score" }, deduplicate_token: true },
    });
    expect(twin.body.id).not.toBe(other.body.id); // the cvc field counts in its fingerprint
    expect((await rawToken(tenantId, card.body.id))?.sealed_cvc).toEqual(expect.any(String));
    expect((await rawToken(tenantId, numericCvc.body.id))?.sealed_cvc).toEqual(expect.any(String));

    const moved = await api.post<{ sweep: { tokensDeleted: number; cvcsRemoved: number } }>("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: 2 * 3600 },
    });

    expect(moved.body.sweep.tokensDeleted).toBeGreaterThanOrEqual(1);
    expect(await rawToken(tenantId, expiring.body.id)).toBeUndefined();
    expect(await rawToken(tenantId, extended.body.id)).toBeDefined();
    const cardItem = await rawToken(tenantId, card.body.id);
    expect(cardItem?.sealed_cvc).toBeUndefined();
    expect(cardItem?.sealed_data).toEqual(expect.any(String));
    expect((await rawToken(tenantId, numericCvc.body.id))?.sealed_cvc).toBeUndefined();
    expect((await api.get<TokenBody>(`/tokens/${other.body.id}`, { key: reader })).body.data).toEqual(
      customer,
    );
    const logs = await api.get<{ data: { operation: string; actor_type: string }[] }>(
      `/logs?entity_id=${expiring.body.id}`,
      { key: managementKey },
    );
    expect(logs.body.data[0]).toMatchObject({ operation: "delete", actor_type: "system" });
  });

  it("reads only what fell due since its last run", async () => {
    const first = await sweepExpired(svc.service.deps);
    const second = await sweepExpired(svc.service.deps);

    expect(second.hoursScanned).toBeLessThanOrEqual(1);
    expect(second.tokensDeleted).toBe(0);
    expect(first.hoursScanned).toBeGreaterThanOrEqual(1);
  });

  it("frees a deduplication fingerprint when its token expires", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const pub = await appKey(api, managementKey, { type: "public", permissions: ["token:create"] });
    const expires_at = new Date(svc.service.deps.clock.now().getTime() + 600_000).toISOString();
    const body = { type: "token", data: { dedupe: "me" }, deduplicate_token: true };

    const first = await api.post<TokenBody>("/tokens", { key: pub, body: { ...body, expires_at } });
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });
    const second = await api.post<TokenBody>("/tokens", { key: pub, body });

    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
  });
});
