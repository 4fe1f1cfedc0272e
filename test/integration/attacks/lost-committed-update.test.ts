/**
 * Review (lost tokens): a staged commit past its commit point whose roll-forward did not finish leaves each token
 * as its old version with the committed transaction's lock, which lapses at the transaction's expiry. Until the
 * sweep's X entry rolls the commit forward (every 15 minutes in AWS; later when it fails and is put off), a write
 * that meets the lapsed lock must not write the OLD version back over the committed one: the sweep's T entry
 * already waits for the transaction (committed-expiry.test.ts), the rewrap's re-seal did not.
 */
import { describe, expect, it } from "vitest";
import type { Client } from "#test/support/http.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const FILLERS = 59; // with the target: 60 staged versions of 60 KB, past one write's 4 MB: a staged commit

type Store = Record<string, unknown>;

interface Job {
  id: string;
  status: string;
  total: number;
  done: number;
  skipped: number;
}

async function rewrapToEnd(api: Client, mgt: string): Promise<Job> {
  const started = await api.post<Job>("/tenants/self/keys/rewrap", { key: mgt });
  expect(started.status).toBe(202);
  for (let i = 0; i < 600; i++) {
    const job = await api.get<Job>(`/tenants/self/keys/rewrap/${started.body.id}`, { key: mgt });
    if (job.body.status !== "running") return job.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the rewrap did not finish");
}

/** A transaction PATCHing 59 fillers and the target; committed, its request dying right after the commit point. */
async function committedButUnapplied() {
  const { api, tenant, owner: writer } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const txn = (await api.post<{ id: string; expires_at: string }>("/transactions", { key: writer })).body;
  const fillers: string[] = [];
  for (let i = 0; i < FILLERS; i++)
    fillers.push(
      (await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: `f${i}` } })).body.id,
    );
  const target = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "old" } });
  expect(target.status).toBe(201);
  const id = target.body.id;
  const headers = { ...mergePatch, "svc-transaction-id": txn.id };
  for (const f of fillers)
    expect(
      (await api.patch(`/tokens/${f}`, { key: writer, body: { data: "z".repeat(60_000) }, headers })).status,
    ).toBe(200);
  const staged = await api.patch(`/tokens/${id}`, {
    key: writer,
    body: { data: "committed".repeat(6_000) },
    headers,
  });
  expect(staged.status).toBe(200);

  const store = svc.service.deps.transactions as unknown as Store;
  const rollForward = store.rollForward;
  store.rollForward = () => Promise.reject(new Error("simulated crash")); // past the commit point
  const commit = await api
    .post(`/transactions/${txn.id}/commit`, {
      key: writer,
      headers: { "svc-idempotency-key": `c-${txn.id}` },
    })
    .finally(() => {
      store.rollForward = rollForward;
    });
  expect(commit.status).toBe(500);
  expect(await svc.service.deps.transactions.get(tenant.tenantId, txn.id)).toMatchObject({
    state: "committed",
    rolling_forward: true,
  });
  // The caller's retry is told the commit took effect (never run again): the committed versions are owed to it.
  const retried = await api.post(`/transactions/${txn.id}/commit`, {
    key: writer,
    headers: { "svc-idempotency-key": `c-${txn.id}` },
  });
  expect(retried.status).not.toBe(200);
  const read = () => api.get<TokenBody>(`/tokens/${id}`, { key: reader });
  return { api, tenant, writer, id, read, store, fillers };
}

/** The X entry's roll-forward fails (put off 15 minutes) until restored. */
function failFinishCommit(store: Store) {
  const finishCommit = store.finishCommit;
  store.finishCommit = () => Promise.reject(new Error("simulated store fault"));
  return () => {
    store.finishCommit = finishCommit;
  };
}

describe("a committed staged update whose lock lapsed before the sweep rolled it forward", () => {
  it("is not undone by a rewrap that re-seals the old version meanwhile", async () => {
    const { api, tenant, read, store } = await committedButUnapplied();
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
    expect(
      after.body.data === "committed".repeat(6_000),
      `data: ${String(after.body.data).slice(0, 20)}`,
    ).toBe(true); // the committed version, never "old"
  }, 300_000);
});
