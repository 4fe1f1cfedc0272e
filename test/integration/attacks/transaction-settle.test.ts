import { describe, expect, it } from "vitest";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Fault (transactions review): a one-write commit is applied, then its request dies before the claims are moved
 * (afterApply: a function timeout, a crash). The sweep, at the transaction's expiry, found it committed and only
 * forgot its op items: an update that changed a deduplicating token's value never moved its claim, so every later
 * deduplicating create of the new value made a second token of it, for good.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

describe("a one-write commit whose request died before moving the claims", () => {
  it("has its claims moved by the sweep: the new value deduplicates to the token", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const body = (data: string) => ({ type: "token", data, deduplicate_token: true });
    const token = await api.post<TokenBody>("/tokens", { key: owner, body: body("v1") });
    expect(token.status).toBe(201);
    const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
    const headers = { "svc-transaction-id": txn.id, ...mergePatch };
    expect(
      (await api.patch(`/tokens/${token.body.id}`, { key: owner, body: { data: "v2" }, headers })).status,
    ).toBe(200);
    // The commit's write lands; the request dies right after it.
    const store = svc.service.deps.transactions as unknown as Record<string, unknown>;
    const afterApply = store.afterApply;
    store.afterApply = () => Promise.reject(new Error("simulated crash"));
    const commit = await api.post(`/transactions/${txn.id}/commit`, { key: owner }).finally(() => {
      store.afterApply = afterApply;
    });
    expect(commit.status).toBe(500);
    expect((await api.get<TokenBody>(`/tokens/${token.body.id}`, { key: reader })).body.data).toBe("v2");

    await advanceTestClock(svc, 3601); // the sweep's X entry

    const again = await api.post<TokenBody>("/tokens", { key: owner, body: body("v2") });
    expect(again.body.id).toBe(token.body.id); // a second token of v2 (its claim never moved)
  });
});
