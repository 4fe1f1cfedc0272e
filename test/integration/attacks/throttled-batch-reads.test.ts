import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import {
  appKey,
  revealEverything,
  type TokenBody,
  type TokenPage,
  tenantWithOwner,
} from "#test/support/tokens.ts";

/**
 * Round-4 review (28 Nov 2026): the tokens' BatchGet (token-batch-get.ts) left keys DynamoDB did not process
 * (throttling answers UnprocessedKeys, no error) out of getMany's answer as if the tokens did not exist:
 * GET /tokens?id= answered 200
 * with nothing, a data: search no match, and a reaction's kept reads (dataReadsOf) recorded an existing token as
 * gone (version -1), its result 409 whenever read. Unread keys are an outage (503), never an absent token.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

/** Answers every BatchGet naming `id` with all its keys unprocessed (how DynamoDB throttles a batch read). */
function unprocessed(svcDynamo: typeof svc.service.deps.dynamo, id: string) {
  let count = 0;
  svcDynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { Keys: unknown[] }> };
      if (context.commandName === "BatchGetItemCommand" && input.RequestItems) {
        const [table, request] = Object.entries(input.RequestItems)[0] as [string, { Keys: unknown[] }];
        if (JSON.stringify(request.Keys).includes(id)) {
          count += 1;
          return {
            output: { $metadata: {}, Responses: {}, UnprocessedKeys: { [table]: request } },
            response: {},
          } as never;
        }
      }
      return next(args);
    },
    { step: "initialize", name: "unprocessedKeys", priority: "high" },
  );
  return {
    count: () => count,
    remove: () => svcDynamo.middlewareStack.remove("unprocessedKeys"),
  };
}

describe("a throttled BatchGet of tokens", () => {
  it("GET /tokens?id= answers 503, not 200 without the token", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const created = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "x" } });
    expect(created.status).toBe(201);
    const fault = unprocessed(svc.service.deps.dynamo, created.body.id);
    let listed: Awaited<ReturnType<typeof api.get<TokenPage>>>;
    try {
      listed = await api.get<TokenPage>(`/tokens?id=${created.body.id}`, { key: owner });
    } finally {
      fault.remove();
    }
    expect(fault.count()).toBeGreaterThan(0);
    // Was 200 with total_items 0: the token answered as not existing.
    expect(listed.status, JSON.stringify(listed.body)).toBe(503);
    const again = await api.get<TokenPage>(`/tokens?id=${created.body.id}`, { key: owner });
    expect(again.body.pagination.total_items).toBe(1);
  });
});

describe("a transaction commit whose own check read is throttled", () => {
  it("answers 503 (retry), not 500, and the transaction commits on the retry", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const created = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "x" } });
    expect(created.status).toBe(201);
    const txn = await api.post<{ id: string }>("/transactions", { key: owner });
    const staged = await api.patch(`/tokens/${created.body.id}`, {
      key: owner,
      body: { metadata: { a: "b" } },
      headers: { ...mergePatch, "svc-transaction-id": txn.body.id },
    });
    expect(staged.status).toBe(200);

    const fault = unprocessed(svc.service.deps.dynamo, created.body.id);
    let commit: Awaited<ReturnType<typeof api.post>>;
    try {
      commit = await api.post(`/transactions/${txn.body.id}/commit`, { key: owner });
    } finally {
      fault.remove();
    }
    expect(fault.count()).toBeGreaterThan(0);
    expect(commit.status, JSON.stringify(commit.body)).toBe(503);
    // Nothing applied, the transaction still open: the retry the 503 asks for commits it.
    const retry = await api.post(`/transactions/${txn.body.id}/commit`, { key: owner });
    expect(retry.status).toBe(200);
    const after = await api.get<TokenBody>(`/tokens/${created.body.id}`, { key: owner });
    expect(after.body.metadata).toEqual({ a: "b" });
  });
});
