import { describe, expect, it } from "vitest";
import { RecordingMetrics } from "#shared/adapters/metrics/recording-metrics.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import { useService } from "#test/support/service.ts";
import {
  appKey,
  revealEverything,
  type TokenBody,
  type TokenPage,
  tenantWithOwner,
} from "#test/support/tokens.ts";

const metrics = new RecordingMetrics();
const svc = useService({ metrics });

/** Makes the store method `name` fail once, as a request that dies at that point would. */
function failOnce(target: object, name: string) {
  const holder = target as Record<string, unknown>;
  const original = holder[name] as (...args: unknown[]) => Promise<unknown>;
  holder[name] = async () => {
    holder[name] = original;
    throw new Error("simulated crash");
  };
}

async function setup(prefix: string) {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const tenantId = tenant.tenantId;
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const ids = Array.from({ length: 120 }, (_, i) => `${prefix}-${i}`);
  const body = ids.map((id) => ({ type: "token", id, data: `value of ${id}` }));
  const status = async (id: string) => (await api.get(`/tokens/${id}`, { key: reader })).status;
  const sweepAfter = (seconds: number) =>
    api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: seconds } });
  return { api, owner, tenantId, ids, body, status, sweepAfter };
}

describe("a batch whose request dies", () => {
  it("after its commit point: none visible until the sweep finishes it, then all, none lost", async () => {
    const { api, owner, ids, body, status, sweepAfter } = await setup("after");
    // The commit point is passed (the record says committed), then the unlocking dies.
    failOnce(svc.service.deps.transactions, "rollForward");
    const headers = { "svc-idempotency-key": "died-after-commit" };
    const died = await api.post("/tokenize", { key: owner, body, headers });
    expect(died.status).toBe(500);
    expect(await status(ids[0] as string)).toBe(404);
    // Its effect is recorded: a retry with the key never runs it again.
    const retried = await api.post("/tokenize", { key: owner, body, headers });
    expect(retried.status).toBe(409);

    // Past the batch's lifetime the sweep applies what was committed.
    await sweepAfter(20 * 60);
    for (const id of [ids[0], ids[60], ids[119]]) expect(await status(id as string)).toBe(200);
  });

  it("after its commit point, midway through applying it: every token counted once in TokensCreated", async () => {
    // Left open at stop 45: a batch counted its creations only when its request succeeded, so the chunks a failed
    // roll-forward had applied were never counted (the sweep counts only what it applies itself).
    const { api, owner, tenantId, ids, body, status, sweepAfter } = await setup("midway");
    const created = () =>
      metrics
        .named(METRIC.tokensCreated)
        .filter((p) => p.metadata?.tenant_id === tenantId)
        .reduce((sum, p) => sum + p.value, 0);
    // DynamoDB throttles the roll-forward's second write past the SDK's retries (its first chunk applied).
    const store = svc.service.deps.transactions as unknown as Record<string, unknown> & {
      client: { send: (command: unknown) => Promise<unknown> };
    };
    const rollForward = store.rollForward as (...args: unknown[]) => Promise<number>;
    const send = store.client.send.bind(store.client);
    let rolling = false;
    let writes = 0;
    store.rollForward = (...args: unknown[]) => {
      rolling = true;
      return rollForward.apply(store, args);
    };
    store.client.send = (command: unknown) => {
      if (rolling && (command as object).constructor.name === "TransactWriteCommand" && ++writes === 2)
        return Promise.reject(Object.assign(new Error("throttled"), { name: "ThrottlingException" }));
      return send(command);
    };
    const failed = await api.post("/tokenize", { key: owner, body }).finally(() => {
      store.rollForward = rollForward;
      store.client.send = send;
    });
    expect(writes).toBeGreaterThanOrEqual(2);
    expect(failed.status).toBeGreaterThanOrEqual(500);

    await sweepAfter(20 * 60);
    for (const id of [ids[0], ids[60], ids[119]]) expect(await status(id as string)).toBe(200);
    expect(created()).toBe(ids.length);
  });

  it("before its commit point: nothing visible, the sweep rolls it back and the ids are free again", async () => {
    const { api, owner, ids, body, status, sweepAfter } = await setup("before");
    // A taken id stops the batch; its rollback dies too, so the staged tokens stay pending.
    await api.post("/tokens", { key: owner, body: { type: "token", id: "before-taken", data: "x" } });
    failOnce(svc.service.deps.transactions, "rollback");
    const died = await api.post("/tokenize", {
      key: owner,
      body: [...body, { type: "token", id: "before-taken", data: "y" }],
      headers: { "svc-idempotency-key": "died-before-commit" },
    });
    expect(died.status).toBe(500);
    expect(await status(ids[0] as string)).toBe(404);
    const blocked = await api.post("/tokenize", { key: owner, body });
    expect(blocked.status).toBe(409);

    await sweepAfter(20 * 60);
    expect(await status(ids[0] as string)).toBe(404);
    // No effect was recorded: the same key runs the batch anew.
    const again = await api.post("/tokenize", {
      key: owner,
      body,
      headers: { "svc-idempotency-key": "died-before-commit" },
    });
    expect(again.status).toBe(201);
    expect(await status(ids[119] as string)).toBe(200);
  });
});

/**
 * POST /tokenize past its commit: the batch is stored, so nothing after it may fail the call (c6b6c95). The
 * fingerprint claims written after the commit are best effort: a throttled claim must not answer 5xx for a stored
 * batch (a client then sends it again, and stores it twice).
 */
describe("POST /tokenize after its commit", () => {
  it("answers 201 for a stored batch when a fingerprint claim after the commit is throttled", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const body = [
      { type: "token", data: "first value" },
      { type: "token", data: "second value" },
    ];
    const { dynamo } = svc.service.deps;
    let throttled = 0;
    dynamo.middlewareStack.add(
      (next, context) => (args) => {
        const item = (args.input as { Item?: { entity?: string } }).Item;
        if (context.commandName === "PutItemCommand" && item?.entity === "fingerprint") {
          throttled += 1;
          throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
        }
        return next(args);
      },
      { step: "initialize", name: "throttleClaims" },
    );
    let res: Awaited<ReturnType<typeof api.post>>;
    try {
      res = await api.post("/tokenize", { key: owner, body });
    } finally {
      dynamo.middlewareStack.remove("throttleClaims");
    }
    const list = await api.get<TokenPage>("/tokens", { key: owner });

    expect(throttled).toBeGreaterThan(0);
    expect(list.body.pagination.total_items).toBe(2);
    expect(res.status).toBe(201);
  });
});

describe("POST /tokenize: the read entry of a duplicate within the batch", () => {
  it("never fails a stored batch: written before the commit, or the batch is not stored", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const body = [
      { type: "token", data: "same value" },
      { type: "token", data: "same value", deduplicate_token: true },
    ];
    const { dynamo } = svc.service.deps;
    let throttled = 0;
    dynamo.middlewareStack.add(
      (next, context) => (args) => {
        const item = (args.input as { Item?: { message?: string } }).Item;
        if (
          context.commandName === "PutItemCommand" &&
          String(item?.message ?? "").startsWith("Existing token returned by deduplication")
        ) {
          throttled += 1;
          throw Object.assign(new Error("throttled"), { name: "ThrottlingException" });
        }
        return next(args);
      },
      { step: "initialize", name: "throttleReadEntry" },
    );
    let res: Awaited<ReturnType<typeof api.post<TokenBody[]>>>;
    try {
      res = await api.post<TokenBody[]>("/tokenize", { key: owner, body });
    } finally {
      dynamo.middlewareStack.remove("throttleReadEntry");
    }
    const list = await api.get<TokenPage>("/tokens", { key: owner });

    expect(throttled).toBeGreaterThan(0);
    // Either the batch failed and stored nothing, or it was stored and answered: never a 5xx for a stored batch.
    const stored = list.body.pagination.total_items;
    expect({ status: res.status, stored }).toEqual(
      res.status === 201 ? { status: 201, stored: 1 } : { status: res.status, stored: 0 },
    );

    // Without the fault: one token, answered twice, its read logged.
    const ok = await api.post<TokenBody[]>("/tokenize", {
      key: owner,
      body: [
        { type: "token", data: "other value" },
        { type: "token", data: "other value", deduplicate_token: true },
      ],
    });
    expect(ok.status).toBe(201);
    expect(ok.body[0]?.id).toBe(ok.body[1]?.id);
  });
});
