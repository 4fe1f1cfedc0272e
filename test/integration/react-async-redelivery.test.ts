import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { reactionResult, revealingReactorApp } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenPage } from "#test/support/tokens.ts";

process.env.SVC_CALLBACK_RETRY_BASE_SECONDS = "0.05";

/**
 * A react-async run whose code created tokens (`tokenize`), then failed to store its outcome (a throttled write):
 * the queue delivers the job again. The tokens are the run's effect: the redelivery must not create them again.
 */
const svc = useService();

describe("react-async redelivered after its tokens were created", () => {
  it("creates the code's token once when storing the outcome failed the first time", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey);
    const acting = await revealingReactorApp(api, managementKey);
    const caller = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:use", "token:read"] }],
    });
    const code = `module.exports = async () => ({ tokenize: { made: { type: "token", data: "from the code" } } });`;
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "maker", code, application: { id: acting.id } },
    });
    expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);

    const { dynamo } = svc.service.deps;
    let failed = 0;
    dynamo.middlewareStack.add(
      (next, context) => (args) => {
        const item = (args.input as { Item?: { entity?: string } }).Item;
        if (context.commandName === "PutItemCommand" && item?.entity === "reaction" && failed++ === 0)
          throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
        return next(args);
      },
      { step: "initialize", name: "throttleReactionStore" },
    );
    let result: Awaited<ReturnType<typeof reactionResult>>;
    try {
      const accepted = await api.post<{ asyncReactorRequestId: string }>(
        `/reactors/${reactor.body.id}/react-async`,
        { key: caller, body: { args: {} } },
      );
      expect(accepted.status).toBe(202);
      result = await reactionResult(api, caller, reactor.body.id, accepted.body.asyncReactorRequestId);
    } finally {
      dynamo.middlewareStack.remove("throttleReactionStore");
    }
    expect(failed).toBeGreaterThan(0);
    const list = await api.get<TokenPage>("/tokens", { key: caller });
    const shown = (result.body as { tokens?: { made?: { id: string } } }).tokens?.made?.id;

    // One token: the redelivery finds the first run's effect and keeps the outcome that says so (never a second run).
    expect(list.body.pagination.total_items).toBe(1);
    if (result.status === 200) expect(list.body.data.map((t) => t.id)).toEqual([shown]);
    else expect(result.status).toBe(409);
  });
});
