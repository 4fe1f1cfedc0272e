import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS } from "#shared/domain/reactors/callback-job.ts";
import { reactingTenant, reactionResult } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { type TokenBody, type TokenPage, VISA } from "#test/support/tokens.ts";

process.env.SVC_CALLBACK_RETRY_BASE_SECONDS = "0.05";

/**
 * A react-async run whose code created tokens (`tokenize`), then failed to store its outcome (a throttled write):
 * the queue delivers the job again. The tokens are the run's effect: the redelivery must not create them again.
 */
const svc = useService();

/** A tenant, a private caller that reveals, and a reactor whose code creates one token (its `tokenize`). */
async function makerReactor() {
  const { api, managementKey, acting, caller } = await reactingTenant(svc, ["token:use", "token:read"]);
  const code = `module.exports = async () => ({ tokenize: { made: { type: "token", data: "from the code" } } });`;
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: managementKey,
    body: { name: "maker", code, application: { id: acting.id } },
  });
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  return { api, caller, reactor };
}

/** A tenant, a private caller that reveals, its card and a reactor answering the card's last 4 (react-async). */
async function last4Reactor() {
  const { api, managementKey, acting, caller } = await reactingTenant(svc, [
    "token:use",
    "token:read",
    "token:create",
  ]);
  const card = await api.post<TokenBody>("/tokens", {
    key: caller,
    body: { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2031 } },
  });
  expect(card.status).toBe(201);
  const code = "module.exports = async (req) => ({ raw: { last4: req.args.card.number.slice(-4) } });";
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: managementKey,
    body: { name: "last4", code, application: { id: acting.id } },
  });
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  return { api, caller, card, reactor };
}

/**
 * The queued run's read of its args' token `tokenId` is throttled, `times` times: only once a job has started (its
 * outcome looked up), so the react request's own read of the card goes through.
 */
function throttleArgsCheck(tokenId: string, times: number) {
  const { dynamo } = svc.service.deps;
  let started = false;
  let thrown = 0;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const pk = JSON.stringify((args.input as { Key?: { PK?: unknown } }).Key?.PK ?? "");
      if (context.commandName === "GetItemCommand" && pk.includes("REACTION#")) started = true;
      if (started && thrown < times && context.commandName === "GetItemCommand" && pk.includes(tokenId)) {
        thrown += 1;
        throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
      }
      return next(args);
    },
    { step: "initialize", name: "throttleArgsCheck", priority: "high" },
  );
  return { thrown: () => thrown, remove: () => dynamo.middlewareStack.remove("throttleArgsCheck") };
}

describe("react-async redelivered after its tokens were created", () => {
  it("creates the code's token once when storing the outcome failed the first time", async () => {
    const { api, caller, reactor } = await makerReactor();

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

describe("a queued run whose args check meets a store outage", () => {
  it("is run again once the store answers, its outcome the code's, not a kept 503", async () => {
    const { api, caller, card, reactor } = await last4Reactor();

    const fault = throttleArgsCheck(card.body.id, 1);
    let result: Awaited<ReturnType<typeof reactionResult>>;
    try {
      const accepted = await api.post<{ asyncReactorRequestId: string }>(
        `/reactors/${reactor.body.id}/react-async`,
        { key: caller, body: { args: { card: `{{ ${card.body.id} }}` } } },
      );
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      result = await reactionResult(api, caller, reactor.body.id, accepted.body.asyncReactorRequestId);
    } finally {
      fault.remove();
    }
    expect(fault.thrown()).toBe(1);
    // Was 503 for good: the throttled check read was kept as the reaction's outcome, the code never run.
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(JSON.stringify(result.body)).toContain("4242");
  });
});

describe("a react-async job the queue gives up on", () => {
  it("leaves an outcome for its caller, not a 404 for good", async () => {
    const { api, caller, card, reactor } = await last4Reactor();

    // Every time: a permanent pre-run failure with no domain answer.
    const fault = throttleArgsCheck(card.body.id, Number.POSITIVE_INFINITY);
    let requestId: string;
    try {
      const accepted = await api.post<{ asyncReactorRequestId: string }>(
        `/reactors/${reactor.body.id}/react-async`,
        { key: caller, body: { args: { card: `{{ ${card.body.id} }}` } } },
      );
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      requestId = accepted.body.asyncReactorRequestId;
      await svc.service.deps.localJobQueue.idle();
    } finally {
      fault.remove();
    }
    // Every attempt failed before the code ran (before the fix the job was then dead-lettered, nothing kept).
    expect(fault.thrown()).toBeGreaterThanOrEqual(MAX_ATTEMPTS);

    // The store answers again: nothing will run the job again (it is a dead letter), so its caller must learn now.
    const result = await api.get(`/reactors/${reactor.body.id}/results/${requestId}`, { key: caller });
    expect(result.status, JSON.stringify(result.body)).not.toBe(404);
    expect(result.status).toBeGreaterThanOrEqual(500);
  });
});

describe("a react-async run throttled after its code's tokens were created", () => {
  it("keeps no 503 (retry) as the outcome of a run that took effect", async () => {
    const { api, caller, reactor } = await makerReactor();

    const { dynamo } = svc.service.deps;
    let started = false;
    let thrown = 0;
    dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const key = (args.input as { Key?: { PK?: unknown } }).Key;
        if (context.commandName === "GetItemCommand" && JSON.stringify(key?.PK ?? "").includes("REACTION#"))
          started = true;
        // One BatchGet's tries (6) all leave every key unprocessed: throttling, as DynamoDB answers it.
        if (started && context.commandName === "BatchGetItemCommand" && thrown < 6) {
          thrown += 1;
          const requestItems = (args.input as { RequestItems: Record<string, unknown> }).RequestItems;
          return { output: { Responses: {}, UnprocessedKeys: requestItems, $metadata: {} } } as never;
        }
        return next(args);
      },
      { step: "initialize", name: "r5-unprocessed-after-tokenize", priority: "high" },
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
      dynamo.middlewareStack.remove("r5-unprocessed-after-tokenize");
    }
    expect(thrown).toBeGreaterThan(0);
    const list = await api.get<TokenPage>("/tokens", { key: caller });
    // The code's token exists: the run took effect.
    expect(list.body.pagination.total_items).toBe(1);
    expect(result.status, JSON.stringify(result.body)).not.toBe(503);
    // Its answer, or the redelivery's: the run took effect and is not run again (never a second token).
    expect([200, 409]).toContain(result.status);
  });
});
