import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Fault (transactions review): DynamoDB cancels a TransactWriteItems it throttled (reason ThrottlingError), or one
 * that met other transactions on its items more often than the client retries (TransactionConflict: the tenant's
 * key counters are written by every create). The commit and the rollback took any cancellation for "the
 * transaction closed meanwhile" and answered 404, which says unknown, finished or expired: the caller gave up on
 * a transaction still open, its tokens held for the rest of the hour and its writes never applied. A cancellation
 * a retry may clear is a 503 (http/outage.ts), as on every other route.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

/** The next TransactWriteItems that closes a transaction (`marker` in an update) is cancelled with `reason`. */
function cancelNextClose(marker: string, reason: string) {
  const { dynamo } = svc.service.deps;
  const name = `cancelNextClose-${marker}`;
  dynamo.middlewareStack.add(
    (next, context) => (args) => {
      if (
        context.commandName === "TransactWriteItemsCommand" &&
        JSON.stringify(args.input).includes(marker)
      ) {
        dynamo.middlewareStack.remove(name);
        const items = (args.input as { TransactItems?: unknown[] }).TransactItems ?? [];
        throw new TransactionCanceledException({
          message: "Transaction cancelled",
          $metadata: {},
          CancellationReasons: items.map(() => ({ Code: reason })),
        });
      }
      return next(args);
    },
    { step: "initialize", name, priority: "high" },
  );
  return () => dynamo.middlewareStack.remove(name);
}

async function staged() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "token", data: "v1" } });
  const txn = (await api.post<{ id: string }>("/transactions", { key: owner })).body;
  const headers = { "svc-transaction-id": txn.id, ...mergePatch };
  expect(
    (await api.patch(`/tokens/${token.body.id}`, { key: owner, body: { data: "v2" }, headers })).status,
  ).toBe(200);
  const data = async () => (await api.get<TokenBody>(`/tokens/${token.body.id}`, { key: reader })).body.data;
  return { api, owner, txn, data };
}

describe("a commit or rollback whose write DynamoDB cancelled for a reason a retry clears", () => {
  for (const reason of ["ThrottlingError", "TransactionConflict"])
    it(`commit: ${reason} is a 503, the transaction still open; the retry commits`, async () => {
      const { api, owner, txn, data } = await staged();
      const restore = cancelNextClose(":committed", reason);
      const first = await api.post(`/transactions/${txn.id}/commit`, { key: owner }).finally(restore);
      const retry = await api.post(`/transactions/${txn.id}/commit`, { key: owner });

      expect([first.status, retry.status]).toEqual([503, 200]); // it was [404, 200]: "unknown or finished"
      expect(await data()).toBe("v2");
    });

  it("rollback: ThrottlingError is a 503, the transaction still open; the retry rolls back", async () => {
    const { api, owner, txn, data } = await staged();
    const restore = cancelNextClose(":rolledBack", "ThrottlingError");
    const first = await api.post(`/transactions/${txn.id}/rollback`, { key: owner }).finally(restore);
    const retry = await api.post(`/transactions/${txn.id}/rollback`, { key: owner });

    expect([first.status, retry.status]).toEqual([503, 200]);
    expect(await data()).toBe("v1");
  });
});
