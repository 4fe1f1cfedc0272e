/**
 * Attack (review of the sweep): a staged commit (past its commit point) whose roll-forward did not finish leaves
 * each token as its old version, with the committed transaction's (soon lapsed) lock. The old version's T entry
 * must not delete a token whose committed staged version extended (or removed) its expiry, and a rewrap meeting the
 * lapsed lock must not re-seal the old version over the committed one (the roll-forward then skipped the token as
 * written since: the committed data lost, lost-tokens review of 28 Nov 2026).
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import type { Client } from "#test/support/http.ts";
import { rewrapToEnd } from "#test/support/keys.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const metrics = new RecordingMetrics();
const svc = useService({ metrics });
const mergePatch = { "content-type": "application/merge-patch+json" };
const FILLERS = 59; // with the target: 60 staged versions of 60 KB, past one write's 4 MB: a staged commit
const FILLERS_60 = 60; // a staged commit of updates only, to which creates are added
const CREATED_IN_TXN = 5;

type Store = Record<string, unknown>;

/**
 * A transaction that PATCHes 59 fillers and the target (data, and expires_at moved to `newExpiry` or cleared),
 * the target created with expires_at at `oldExpiry(txnExpiresAt)`; committed, the request dying right after the
 * commit point (before any roll-forward).
 */
async function committedButUnapplied(oldExpiry: (txnExpiresMs: number) => number, clear = false) {
  const { api, tenant, owner: writer } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const txn = (await api.post<{ id: string; expires_at: string }>("/transactions", { key: writer })).body;
  const txnExpires = Date.parse(txn.expires_at);
  const fillers: string[] = [];
  for (let i = 0; i < FILLERS; i++)
    fillers.push(
      (await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: `f${i}` } })).body.id,
    );
  const target = await api.post<TokenBody>("/tokens", {
    key: writer,
    body: { type: "token", data: "old", expires_at: new Date(oldExpiry(txnExpires)).toISOString() },
  });
  expect(target.status).toBe(201);
  const id = target.body.id;
  const headers = { ...mergePatch, "svc-transaction-id": txn.id };
  for (const f of fillers)
    expect(
      (await api.patch(`/tokens/${f}`, { key: writer, body: { data: "z".repeat(60_000) }, headers })).status,
    ).toBe(200);
  const newExpiry = clear ? null : new Date(txnExpires + 30 * 86_400_000).toISOString();
  const staged = await api.patch(`/tokens/${id}`, {
    key: writer,
    body: { data: "z".repeat(60_000), expires_at: newExpiry },
    headers,
  });
  expect(staged.status).toBe(200);

  const { store, record } = await commitDyingPastCommitPoint(api, writer, tenant.tenantId, txn.id);

  const raw = async () =>
    (
      await svc.service.deps.dynamo.send(
        new GetCommand({
          TableName: svc.service.deps.config.tableName,
          Key: tokenKeys.token(tenant.tenantId, id),
          ConsistentRead: true,
        }),
      )
    ).Item;
  const read = () => api.get<TokenBody>(`/tokens/${id}`, { key: reader });
  return {
    api,
    tenant,
    writer,
    id,
    txnExpires,
    raw,
    read,
    store,
    record,
    now: Date.parse(target.body.created_at),
  };
}

/** Commits `txnId`, the request dying right past the commit point (before any roll-forward): committed, unapplied. */
async function commitDyingPastCommitPoint(api: Client, writer: string, tenantId: string, txnId: string) {
  const store = svc.service.deps.transactions as unknown as Store;
  const rollForward = store.rollForward;
  store.rollForward = () => Promise.reject(new Error("simulated crash")); // past the commit point
  const commit = await api.post(`/transactions/${txnId}/commit`, { key: writer }).finally(() => {
    store.rollForward = rollForward;
  });
  expect(commit.status).toBe(500);
  const record = await svc.service.deps.transactions.get(tenantId, txnId);
  expect(record).toMatchObject({ state: "committed", rolling_forward: true }); // committed: never undone
  return { store, record };
}

/** Makes the transaction store's finishCommit (the X entry's roll-forward) fail until restored. */
function failFinishCommit(store: Store) {
  const finishCommit = store.finishCommit;
  store.finishCommit = () => Promise.reject(new Error("simulated store fault"));
  return () => {
    store.finishCommit = finishCommit;
  };
}

describe("control", () => {
  it("rolls the committed version forward when only the X entry is due (old expiry later than the sweep)", async () => {
    const { read, txnExpires } = await committedButUnapplied((txnExpires) => txnExpires + 7200_000);
    await advanceTestClock(svc, 3700); // X only: finishes the commit

    const after = await read();
    expect(after.status).toBe(200);
    expect(Date.parse(String(after.body.expires_at))).toBeGreaterThan(txnExpires + 86_400_000);
  }, 240_000);
});

describe("attack: a committed staged version's expiry against the old version's T entry", () => {
  it("keeps the token when the sweep reaches the old T entry before the X entry (no failure, one run)", async () => {
    // Old expiry two minutes before the transaction's: the sweep (every 15 min in AWS) runs once past both.
    const { id, read, txnExpires, raw } = await committedButUnapplied((txnExpires) => txnExpires - 120_000);
    await advanceTestClock(svc, 3700); // one sweep: T (old expiry) due first, then X

    const after = await read();
    expect(await raw(), `token ${id}: its item is gone`).toBeDefined(); // the T entry deleted it
    expect(after.status).toBe(200);
    expect((after.body.data as string).length).toBe(60_000);
    expect(Date.parse(String(after.body.expires_at))).toBeGreaterThan(txnExpires + 86_400_000); // the committed one
  }, 240_000);

  it("keeps the token whose committed version clears expires_at (same ordering)", async () => {
    const { read } = await committedButUnapplied((txnExpires) => txnExpires - 120_000, true);
    await advanceTestClock(svc, 3700);

    const after = await read();
    expect(after.status).toBe(200);
    expect(after.body.expires_at).toBeUndefined();
  }, 240_000);

  it("keeps the token when the X entry fails and is put off, and T (deferred past the hold) comes back", async () => {
    // The T entry falls due while the lock holds: put off to a second after the transaction's expiry.
    const { read, store } = await committedButUnapplied((txnExpires) => txnExpires - 600_000);
    await advanceTestClock(svc, 3100); // T due and held: deferred to the expiry + 1 s
    const restore = failFinishCommit(store);
    try {
      await advanceTestClock(svc, 600); // X fails (put off 15 min); T, a second after, finds the lock lapsed
    } finally {
      restore();
    }
    await advanceTestClock(svc, 1000); // X again: rolls forward

    const after = await read();
    expect(after.status).toBe(200);
    expect((after.body.data as string).length).toBe(60_000);
  }, 240_000);

  it("keeps the token when the X entry fails and the old expiry falls after the transaction's", async () => {
    const { read, store } = await committedButUnapplied((txnExpires) => txnExpires + 300_000);
    const restore = failFinishCommit(store);
    try {
      await advanceTestClock(svc, 3700); // X fails, put off 15 min
      await advanceTestClock(svc, 300); // T (old expiry) due before X's retry
    } finally {
      restore();
    }
    await advanceTestClock(svc, 1000); // X again

    const after = await read();
    expect(after.status).toBe(200);
    expect((after.body.data as string).length).toBe(60_000);
  }, 240_000);
});

describe("a commit that lands after the X entry read the transaction open", () => {
  it("is rolled forward by that X entry, not left unapplied with no due item left", async () => {
    // The commit's request read its clock just before the expiry; its write landed after the sweep's X entry had
    // read the record (open). The entry's rollback is refused (the record is committed); the request dies midway.
    const { read, store, record } = await committedButUnapplied((txnExpires) => txnExpires + 2 * 86_400_000);
    const get = store.get as (...args: unknown[]) => Promise<unknown>;
    let stale = true;
    store.get = async (...args: unknown[]) => {
      const found = await get.apply(store, args);
      if (!stale) return found;
      stale = false;
      return { ...(found as object), state: "open", rolling_forward: undefined }; // as read before the commit
    };
    try {
      await advanceTestClock(svc, 3700); // X due: its rollback is refused
    } finally {
      store.get = get;
    }
    expect(record).toBeDefined();
    const after = await read();
    expect(after.status).toBe(200);
    expect((after.body.data as string).length).toBe(60_000); // the committed version, applied
  }, 240_000);
});

describe("no regression", () => {
  it("still deletes an expired token whose (never committed) transaction lapsed, in the same run", async () => {
    const { api, tenant, owner: writer } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const txn = (await api.post<{ id: string; expires_at: string }>("/transactions", { key: writer })).body;
    const txnExpires = Date.parse(txn.expires_at);
    const token = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "old", expires_at: new Date(txnExpires - 120_000).toISOString() },
    });
    const headers = { ...mergePatch, "svc-transaction-id": txn.id };
    const later = new Date(txnExpires + 86_400_000).toISOString();
    expect(
      (await api.patch(`/tokens/${token.body.id}`, { key: writer, body: { expires_at: later }, headers }))
        .status,
    ).toBe(200);
    await advanceTestClock(svc, 3700); // T (old expiry) first: the transaction is rolled back, then the token goes

    expect((await api.get(`/tokens/${token.body.id}`, { key: reader })).status).toBe(404);
    const stored = await svc.service.deps.dynamo.send(
      new GetCommand({
        TableName: svc.service.deps.config.tableName,
        Key: tokenKeys.token(tenant.tenantId, token.body.id),
        ConsistentRead: true,
      }),
    );
    expect(stored.Item).toBeUndefined(); // deleted in that run, not left for a later one
  });
});

describe("a committed staged update whose lock lapsed before the sweep rolled it forward", () => {
  it("is not undone by a rewrap that re-seals the old version meanwhile", async () => {
    const { api, tenant, read, store } = await committedButUnapplied((txnExpires) => txnExpires + 7200_000);
    const restore = failFinishCommit(store);
    try {
      await advanceTestClock(svc, 3700); // the lock lapses; X fails and is put off 15 minutes
    } finally {
      restore();
    }
    const mgt = tenant.managementKey;
    expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
    const job = await rewrapToEnd(api, mgt);
    expect(job.status).toBe("succeeded");
    await advanceTestClock(svc, 1000); // X again: rolls the commit forward

    const after = await read();
    expect(after.status).toBe(200);
    expect(after.body.data === "z".repeat(60_000), `data: ${String(after.body.data).slice(0, 20)}`).toBe(
      true,
    );
  }, 300_000);
});

describe("a write meeting the lock of a committed staged transaction the sweep has not finished", () => {
  // The lost-tokens review (28 Nov 2026): past the lock's lapse a PATCH replaced the old version and the
  // roll-forward then skipped the token as written since: the committed data lost for good.
  it("applies the committed version first: a merge-patch of metadata after the lock lapsed keeps the committed data", async () => {
    const { api, writer, read, store, txnExpires, id } = await committedButUnapplied(
      (txnExpires) => txnExpires + 7200_000,
    );
    const restore = failFinishCommit(store);
    try {
      await advanceTestClock(svc, 3700); // the lock lapses; the sweep's roll-forward fails and is put off
    } finally {
      restore();
    }
    const patched = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: writer,
      body: { metadata: { note: "after" } },
      headers: mergePatch,
    });
    expect(patched.status).toBe(200);
    await advanceTestClock(svc, 1000); // the sweep comes back

    const after = await read();
    expect(after.status).toBe(200);
    expect(after.body.data === "z".repeat(60_000), `data: ${String(after.body.data).slice(0, 20)}`).toBe(
      true,
    );
    expect(after.body.metadata).toEqual({ note: "after" });
    expect(Date.parse(String(after.body.expires_at))).toBeGreaterThan(txnExpires + 86_400_000);
  }, 300_000);

  it("lets a write through while the committed transaction's lock still holds, on the committed version", async () => {
    const { api, writer, read, id } = await committedButUnapplied((txnExpires) => txnExpires + 7200_000);
    const patched = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: writer,
      body: { metadata: { note: "during" } },
      headers: mergePatch,
    });
    expect(patched.status).toBe(200); // was 409 for up to an hour: held by a transaction already committed

    const after = await read();
    expect(after.body.data === "z".repeat(60_000), `data: ${String(after.body.data).slice(0, 20)}`).toBe(
      true,
    );
    expect(after.body.metadata).toEqual({ note: "during" });
  }, 300_000);
});

/** An open transaction staging 60 updates of 60 KB (past one write: a staged commit) and `creates` creates. */
async function stagedWithCreates(creates: number) {
  const { api, tenant, owner: writer } = await tenantWithOwner(svc);
  const txn = (await api.post<{ id: string }>("/transactions", { key: writer })).body;
  const fillers: string[] = [];
  for (let i = 0; i < FILLERS_60; i++)
    fillers.push(
      (await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: `f${i}` } })).body.id,
    );
  const headers = { ...mergePatch, "svc-transaction-id": txn.id };
  for (const f of fillers)
    expect(
      (await api.patch(`/tokens/${f}`, { key: writer, body: { data: "z".repeat(60_000) }, headers })).status,
    ).toBe(200);
  for (let i = 0; i < creates; i++)
    expect(
      (
        await api.post("/tokens", {
          key: writer,
          body: { type: "token", data: `new${i}` },
          headers: { "svc-transaction-id": txn.id },
        })
      ).status,
    ).toBe(201);
  return { api, tenant, writer, txn, fillers };
}

describe("writes meeting a committed staged transaction's holds at once", () => {
  it("counts a committed transaction's creations once when two PATCHes finish it at once", async () => {
    const { api, tenant, writer, txn, fillers } = await stagedWithCreates(CREATED_IN_TXN);

    await commitDyingPastCommitPoint(api, writer, tenant.tenantId, txn.id);

    const createdBefore = metrics
      .named(METRIC.tokensCreated)
      .filter((p) => p.metadata?.tenant_id === tenant.tenantId)
      .reduce((s, p) => s + p.value, 0);
    // Three writes of three of the transaction's tokens at once, each finishing it (review round 2, 28 Nov 2026:
    // each counted all of its creations).
    const patches = await Promise.all(
      [fillers[0], fillers[1], fillers[2]].map((id) =>
        api.patch(`/tokens/${id}`, { key: writer, body: { metadata: { n: "1" } }, headers: mergePatch }),
      ),
    );
    expect(patches.map((p) => p.status)).toEqual([200, 200, 200]);
    const created =
      metrics
        .named(METRIC.tokensCreated)
        .filter((p) => p.metadata?.tenant_id === tenant.tenantId)
        .reduce((s, p) => s + p.value, 0) - createdBefore;
    // The transaction created CREATED_IN_TXN tokens: counted once.
    expect(created).toBe(CREATED_IN_TXN);
  }, 300_000);
});

describe("a staged commit whose request fails midway (review round 3, 28 Nov 2026)", () => {
  it("counts every creation once, also those of the chunks the failed request applied", async () => {
    const CREATES = 24;
    const { api, tenant, writer, txn, fillers } = await stagedWithCreates(CREATES);
    const sum = () =>
      metrics
        .named(METRIC.tokensCreated)
        .filter((p) => p.metadata?.tenant_id === tenant.tenantId)
        .reduce((s, p) => s + p.value, 0);
    const before = sum();

    // DynamoDB throttles the roll-forward's second chunk past the SDK's retries (the first chunk applied).
    const store = svc.service.deps.transactions as unknown as {
      client: { send: (c: unknown) => Promise<unknown> };
    };
    const client = store.client;
    const send = client.send.bind(client);
    let transactWrites = 0;
    client.send = (command: unknown) => {
      if ((command as object).constructor.name === "TransactWriteCommand" && ++transactWrites === 3)
        return Promise.reject(Object.assign(new Error("throttled"), { name: "ThrottlingException" }));
      return send(command);
    };
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: writer }).finally(() => {
      client.send = send;
    });
    expect(transactWrites).toBeGreaterThanOrEqual(3);
    expect(commit.status).toBeGreaterThanOrEqual(500);
    expect(await svc.service.deps.transactions.get(tenant.tenantId, txn.id)).toMatchObject({
      rolling_forward: true,
    });
    // A later write meeting one of its holds finishes it (as the sweep would at expiry).
    for (const f of fillers) {
      const state = await svc.service.deps.transactions.get(tenant.tenantId, txn.id);
      if (!state?.rolling_forward) break;
      const patch = await api.patch(`/tokens/${f}`, {
        key: writer,
        body: { metadata: { n: "1" } },
        headers: mergePatch,
      });
      expect(patch.status).toBe(200);
    }
    expect(await svc.service.deps.transactions.get(tenant.tenantId, txn.id)).not.toHaveProperty(
      "rolling_forward",
    );
    expect(sum() - before).toBe(CREATES);
  }, 300_000);
});
