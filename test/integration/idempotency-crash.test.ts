import { afterEach, describe, expect, it } from "vitest";
import { bodyText, type Client, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import {
  appKey,
  MASTERCARD,
  revealEverything,
  type TokenBody,
  type TokenPage,
  tenantWithOwner,
  VISA,
} from "#test/support/tokens.ts";

/**
 * A request that dies between its effect and the completion of its idempotency record (a Lambda timing out, a
 * process killed, a connection dropped after the write). The crash is injected through the idempotency store port:
 * completing and releasing the record fail, as if the process had died right after the write. The retry with the
 * same key must replay the effect, never run it again.
 */
const svc = useService();
const LEASE_SECONDS = 61;

type Page = { pagination: { total_items: number }; data: { id: string; name?: string }[] };
type Logs = { data: { operation: string }[] };

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

/** From now until restored: the request "dies" after its handler ran (no completion, no release). */
function crashAfterEffect() {
  const deps = svc.service.deps;
  const real = deps.idempotency;
  const died = () => Promise.reject(new Error("simulated crash after the effect"));
  deps.idempotency = Object.assign(Object.create(real) as typeof real, {
    complete: died,
    release: died,
  });
  restore = () => {
    deps.idempotency = real;
  };
}

const advanceClock = (api: Client, seconds: number) =>
  api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: seconds } });

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const writer = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  return { api, ...tenant, writer };
}

describe("idempotency across a crash between effect and completion", () => {
  it("replays a token create whose answer was lost, and stores one token with one create entry", async () => {
    const { api, managementKey, writer } = await setup();
    const headers = { "svc-idempotency-key": "crash-token-1" };
    const body = { type: "card", data: { number: VISA, expiration_month: 12, expiration_year: 2030 } };

    crashAfterEffect();
    const lost = await api.post<TokenBody>("/tokens", { key: writer, body, headers });
    restore?.();
    const tooEarly = await api.post<TokenBody>("/tokens", { key: writer, body, headers });
    await advanceClock(api, LEASE_SECONDS);
    const retry = await api.post<TokenBody>("/tokens", { key: writer, body, headers });
    const again = await api.post<TokenBody>("/tokens", { key: writer, body, headers });
    const list = await api.get<TokenPage>("/tokens", { key: writer });
    const logs = await api.get<Logs>(`/logs?entity_id=${retry.body.id}`, { key: managementKey });

    expect(lost.status).toBe(500);
    // Within the lease the first request may still be running: 409, as for any request in flight.
    expect(tooEarly.status).toBe(409);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(retry.body.data).toEqual(body.data);
    expect(again.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(retry.body.id);
    expect(list.body.pagination.total_items).toBe(1);
    expect(logs.body.data.filter((e) => e.operation === "create")).toHaveLength(1);
  });

  it("never replays a lost create as another caller's token made later under the same id (after a delete)", async () => {
    const { api, managementKey } = await setup();
    const victim = await appKey(api, managementKey, { type: "private", rules: revealEverything });
    // Creates cards and sees them whole in its create answers; reads them masked; cleans up its own mistakes.
    const intake = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/pci/", transform: "reveal", permissions: ["token:create"] },
        { priority: 2, container: "/pci/", transform: "mask", permissions: ["token:read", "token:delete"] },
      ],
    });
    const id = "customer-42-card";
    const headers = { "svc-idempotency-key": "crash-reused-id-1" };
    const own = { number: MASTERCARD, expiration_month: 1, expiration_year: 2031 };
    const secret = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: "987" };

    crashAfterEffect();
    const lost = await api.post<TokenBody>("/tokens", {
      key: intake,
      body: { id, type: "card", data: own },
      headers,
    });
    restore?.();
    const removed = await api.delete(`/tokens/${id}`, { key: intake });
    // Another caller later stores its own card under the same id (ids are the callers' to choose).
    const stored = await api.post<TokenBody>("/tokens", {
      key: victim,
      body: { id, type: "card", data: secret },
    });
    const masked = await api.get<TokenBody>(`/tokens/${id}`, { key: intake });
    await advanceClock(api, LEASE_SECONDS);
    const retry = await api.post<TokenBody>("/tokens", {
      key: intake,
      body: { id, type: "card", data: own },
      headers,
    });

    expect(lost.status).toBe(500);
    expect(removed.status).toBe(204);
    expect(stored.status).toBe(201);
    expect(bodyText(masked.body)).not.toContain(VISA);
    // The retry's own token is gone: 404, never the other caller's card, revealed by the create's rule.
    expect(bodyText(retry.body)).not.toContain(VISA);
    expect(bodyText(retry.body)).not.toContain("987");
    expect(retry.status).toBe(404);
  });

  it("replays an application create whose answer was lost: one application, its key not shown again", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "crash-app-1" };
    const body = { name: "checkout", type: "public", permissions: ["token:create"] };

    crashAfterEffect();
    const lost = await api.post("/applications", { key: managementKey, body, headers });
    restore?.();
    await advanceClock(api, LEASE_SECONDS);
    const retry = await api.post<{ id: string; name: string; key?: string }>("/applications", {
      key: managementKey,
      body,
      headers,
    });
    const list = await api.get<Page>("/applications", { key: managementKey });

    expect(lost.status).toBe(500);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(retry.body.name).toBe("checkout");
    expect(retry.body.key).toBeUndefined();
    expect(list.body.data.filter((a) => a.name === "checkout")).toHaveLength(1);
  });

  it("never runs a lost token PATCH again: the retry answers 409 and the token keeps one change", async () => {
    const { api, writer } = await setup();
    const token = await api.post<TokenBody>("/tokens", { key: writer, body: { type: "token", data: "v1" } });
    const headers = {
      "svc-idempotency-key": "crash-patch-1",
      "content-type": "application/merge-patch+json",
    };

    crashAfterEffect();
    const lost = await api.patch(`/tokens/${token.body.id}`, { key: writer, body: { data: "v2" }, headers });
    restore?.();
    await advanceClock(api, LEASE_SECONDS);
    const retry = await api.patch(`/tokens/${token.body.id}`, { key: writer, body: { data: "v3" }, headers });
    const read = await api.get<TokenBody>(`/tokens/${token.body.id}`, { key: writer });

    expect(lost.status).toBe(500);
    expect(retry.status).toBe(409);
    expect(retry.headers.get("content-type")).toContain("application/problem+json");
    expect(bodyText(retry.body)).not.toContain("v2");
    expect(read.body.data).toBe("v2");
  });

  it("replays at once when the request failed after its effect (the record is released to replay, not rerun)", async () => {
    const { api, writer } = await setup();
    const headers = { "svc-idempotency-key": "fail-after-1" };
    const deps = svc.service.deps;
    const real = deps.idempotency;
    // Completing fails, releasing works: the request answers 500 but frees its record for a replay.
    deps.idempotency = Object.assign(Object.create(real) as typeof real, {
      complete: () => Promise.reject(new Error("store hiccup")),
    });
    restore = () => {
      deps.idempotency = real;
    };
    const failed = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "x" },
      headers,
    });
    restore();
    const retry = await api.post<TokenBody>("/tokens", {
      key: writer,
      body: { type: "token", data: "x" },
      headers,
    });
    const list = await api.get<TokenPage>("/tokens", { key: writer });

    expect(failed.status).toBe(500);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(list.body.pagination.total_items).toBe(1);
  });

  it("runs a retry as new when the request undid its own write (an invitation withdrawn: its e-mail failed)", async () => {
    const { api, managementKey } = await setup();
    const headers = { "svc-idempotency-key": "withdrawn-1" };
    const body = { email: `withdrawn${Date.now()}@example.com` };
    const deps = svc.service.deps;
    const real = deps.mailer;
    deps.mailer = Object.assign(Object.create(real) as typeof real, {
      send: () => Promise.reject(new Error("mail server down")),
    });
    restore = () => {
      deps.mailer = real;
    };

    const failed = await api.post("/tenants/self/invitations", { key: managementKey, body, headers });
    restore();
    const retry = await api.post<{ id: string }>("/tenants/self/invitations", {
      key: managementKey,
      body,
      headers,
    });
    const read = await api.get(`/tenants/self/invitations/${retry.body.id}`, { key: managementKey });

    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(read.status).toBe(200);
  });

  it("never lets a request whose lease lapsed take effect after a retry claimed its key (409, one token)", async () => {
    const { api, writer } = await setup();
    const headers = { "svc-idempotency-key": "slow-1" };
    const body = { type: "token", data: "slow" };
    const deps = svc.service.deps;
    const real = deps.tokens;
    let reached!: () => void;
    const atWrite = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let proceed!: () => void;
    const gate = new Promise<void>((resolve) => {
      proceed = resolve;
    });
    // The first request stalls just before its write (a Lambda frozen, a GC pause) past its lease.
    deps.tokens = Object.assign(Object.create(real) as typeof real, {
      create: async (...args: Parameters<typeof real.create>) => {
        reached();
        await gate;
        return real.create(...args);
      },
    });
    restore = () => {
      deps.tokens = real;
    };

    const slow = api.post<TokenBody>("/tokens", { key: writer, body, headers });
    await atWrite;
    restore();
    await advanceClock(api, LEASE_SECONDS);
    const retry = await api.post<TokenBody>("/tokens", { key: writer, body, headers });
    proceed();
    const late = await slow;
    const list = await api.get<TokenPage>("/tokens", { key: writer });

    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBeNull();
    expect(late.status).toBe(409);
    expect(list.body.pagination.total_items).toBe(1);
  });
});

/**
 * A write transaction that commits while its caller sees an error (the answer lost on the wire: a request timeout
 * after DynamoDB applied it, a connection reset). The request fails; its effect was recorded on the idempotency
 * record in the same transaction, so a retry with the same key must replay it, never run it again.
 */
/** Until removed: the first write transaction that records an idempotent effect commits, then answers an error. */
function loseFirstEffectAnswer() {
  const { dynamo } = svc.service.deps;
  let lost = false;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const items = (args.input as { TransactItems?: { Update?: { Key?: { PK?: string } } }[] })
        .TransactItems;
      const effect = items?.some((i) => String(i.Update?.Key?.PK ?? "").startsWith("IDEMP#"));
      if (context.commandName === "TransactWriteItemsCommand" && effect && !lost) {
        lost = true;
        throw Object.assign(new Error("connection reset after the commit"), { name: "TimeoutError" });
      }
      return out;
    },
    { step: "initialize", name: "loseCommitAnswer" },
  );
  return () => dynamo.middlewareStack.remove("loseCommitAnswer");
}

describe("a write whose commit answer is lost", () => {
  it("a token create retried with its idempotency key stores one token", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const headers = { "svc-idempotency-key": "lost-answer-1" };
    const body = { type: "token", data: "once" };

    const restore = loseFirstEffectAnswer();
    let first: Awaited<ReturnType<typeof api.post>>;
    try {
      first = await api.post("/tokens", { key: owner, body, headers });
    } finally {
      restore();
    }
    const retry = await api.post<TokenBody>("/tokens", { key: owner, body, headers });
    const list = await api.get<TokenPage>("/tokens", { key: owner });

    expect(first.status).toBe(503);
    expect(list.body.pagination.total_items).toBe(1);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(retry.body.id).toBe(list.body.data[0]?.id);
  });
});
