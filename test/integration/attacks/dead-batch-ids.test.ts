import { describe, expect, it } from "vitest";
import { BATCH_CLAIM_GRACE_SECONDS, BATCH_REQUEST_SECONDS } from "#shared/domain/transactions.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Review of stop 50 (a50), on round 12 (7287c00): a batch's hold is no longer released by another writer's key
 * check (a shopper's create rolled an import back), but then a batch whose request died held its chosen ids until
 * the sweep rolled it back at its 15-minute expiry: its retry answered 409 "already exists" meanwhile.
 */
const svc = useService();

async function diedMidStaging(api: Api, body: unknown[], key: string) {
  const tokens = svc.service.deps.tokens as unknown as Record<
    string,
    (...args: unknown[]) => Promise<unknown>
  >;
  const transactions = svc.service.deps.transactions as unknown as Record<
    string,
    (...args: unknown[]) => Promise<unknown>
  >;
  const stage = tokens.stageCreates as (...args: unknown[]) => Promise<unknown>;
  const rollback = transactions.rollback as (...args: unknown[]) => Promise<unknown>;
  // The request dies after staging (the function's timeout, a crash): nothing commits, nothing rolls back.
  tokens.stageCreates = async (...args: unknown[]) => {
    await stage.apply(svc.service.deps.tokens, args);
    throw new Error("Task timed out");
  };
  transactions.rollback = async () => {
    throw new Error("Task timed out");
  };
  try {
    return (await api.post("/tokenize", { key, body })).status;
  } finally {
    tokens.stageCreates = stage;
    transactions.rollback = rollback;
  }
}

type Api = Awaited<ReturnType<typeof tenantWithOwner>>["api"];

describe("a POST /tokenize batch whose request died mid-staging", () => {
  it("holds its chosen ids while it could still commit, and frees them once it cannot", async () => {
    const { api, owner, tenant } = await tenantWithOwner(svc);
    // An import under the back end's own ids: too many for one write, so staged pending in a batch.
    const ids = Array.from({ length: 60 }, (_, i) => `dead-batch-order-${i}`);
    const body = ids.map((id) => ({ type: "token", id, data: `order ${id}` }));
    expect(await diedMidStaging(api, body, owner)).toBeGreaterThanOrEqual(500);

    // Within its request's time it may still commit: its ids are held (a create under one is refused).
    const early = await api.post("/tokens", {
      key: owner,
      body: { type: "token", id: ids[0], data: "other" },
    });
    expect(early.status).toBe(409);

    await advanceTestClock(svc, BATCH_REQUEST_SECONDS + BATCH_CLAIM_GRACE_SECONDS + 5);
    const retry = await api.post<unknown[]>("/tokenize", { key: owner, body });
    // Before: 409 "A token with this id already exists" until the sweep's rollback at the batch's expiry.
    expect(retry.status, JSON.stringify(retry.body).slice(0, 300)).toBe(201);
    const single = await api.get<{ data: string }>(`/tokens/${ids[0]}`, { key: owner });
    expect(single.status).toBe(200);
    const logs = await api.get<{ data: { message?: string }[] }>("/logs?size=100", {
      key: tenant.managementKey,
    });
    expect(logs.body.data.map((l) => l.message)).toContain("Batch rolled back: its request did not finish");
  });
});

describe("a staged POST /tokenize batch rolled back", () => {
  it("leaves its tokens logged as pending in the batch, never as created, beside the batch's rollback", async () => {
    const { api, owner, tenant } = await tenantWithOwner(svc);
    const taken = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: { type: "token", id: "rolled-back-taken", data: "first" },
    });
    expect(taken.status).toBe(201);
    const ids = Array.from({ length: 59 }, (_, i) => `rolled-back-order-${i}`);
    const body = [...ids, "rolled-back-taken"].map((id) => ({ type: "token", id, data: `order ${id}` }));
    const refused = await api.post("/tokenize", { key: owner, body });
    expect(refused.status).toBe(409);
    const entries = await api.get<{ data: { message?: string; operation: string }[] }>(
      `/logs?entity_id=${ids[0]}`,
      { key: tenant.managementKey },
    );
    const messages = entries.body.data.map((l) => l.message ?? "");
    // Before: "Token created in batch <id>" for a token that never existed.
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((m) => /^Token creation pending in batch /.test(m))).toBe(true);
    const batchId = messages[0]?.replace("Token creation pending in batch ", "");
    const batch = await api.get<{ data: { message?: string }[] }>(`/logs?entity_id=${batchId}`, {
      key: tenant.managementKey,
    });
    expect(batch.body.data.map((l) => l.message)).toContain("Batch rolled back");
  });
});
