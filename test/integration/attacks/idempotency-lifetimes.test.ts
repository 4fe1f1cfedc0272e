import { describe, expect, it } from "vitest";
import { bodyText, type Client } from "#test/support/http.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import {
  ALL_TOKEN_PERMISSIONS,
  appKey,
  type TokenBody,
  tenantWithOwner,
  VISA,
} from "#test/support/tokens.ts";

/**
 * Attack: an idempotent replay outlives the data it answers. The first answer of a write is stored for 24 h, so
 * replaying it (the same key, any body) showed a card's cvc a day after its one-hour lifetime, and the data of
 * a token deleted, expired or changed since. A replay now presents the token again as it is, for the same caller.
 */
const svc = useService();
const CVC = "987";
const card = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: CVC };
const revealOnCreate = [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:create"] }];

const advanceClock = (api: Client, seconds: number) =>
  api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: seconds } });

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  // A checkout key: creates cards and sees them revealed in the create answer, but cannot read them later.
  const checkout = await appKey(api, tenant.managementKey, { type: "private", rules: revealOnCreate });
  return { api, owner, checkout, managementKey: tenant.managementKey };
}

const createCard = (api: Client, key: string, idempotencyKey: string, extra: Record<string, unknown> = {}) =>
  api.post<TokenBody>("/tokens", {
    key,
    body: { type: "card", data: card, ...extra },
    headers: { "svc-idempotency-key": idempotencyKey },
  });

describe("attack: an idempotent replay outliving the data it answers", () => {
  it("shows no cvc past its hour", async () => {
    const { api, checkout } = await setup();
    const first = await createCard(api, checkout, "cvc-1");
    const early = await createCard(api, checkout, "cvc-1");

    await advanceClock(api, 3601);
    const late = await createCard(api, checkout, "cvc-1");

    expect(first.status).toBe(201);
    expect(bodyText(first.body)).toContain(CVC);
    expect(early.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(early.body).toEqual(first.body);
    expect(late.status).toBe(201);
    expect(late.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(late.body.id).toBe(first.body.id);
    expect(late.body.data).toEqual({ number: VISA, expiration_month: 12, expiration_year: 2030 });
    expect(bodyText(late.body)).not.toContain(CVC);
  });

  it("shows nothing of a token deleted since (404), even to another body", async () => {
    const { api, owner, checkout } = await setup();
    const first = await createCard(api, checkout, "deleted-1");
    const deleted = await api.delete(`/tokens/${first.body.id}`, { key: owner });

    const replay = await createCard(api, checkout, "deleted-1");
    const otherBody = await api.post<TokenBody>("/tokens", {
      key: checkout,
      body: { type: "token", data: "anything" },
      headers: { "svc-idempotency-key": "deleted-1" },
    });

    expect(first.status).toBe(201);
    expect(deleted.status).toBe(204);
    for (const res of [replay, otherBody]) {
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(bodyText(res.body)).not.toContain(VISA);
      expect(bodyText(res.body)).not.toContain("4242");
    }
  });

  it("shows nothing of a token expired since (404)", async () => {
    const { api, checkout } = await setup();
    const soon = new Date(svc.service.deps.clock.now().getTime() + 120_000).toISOString();
    const first = await createCard(api, checkout, "expired-1", { expires_at: soon });

    await advanceClock(api, 180);
    const replay = await createCard(api, checkout, "expired-1", { expires_at: soon });

    expect(first.status).toBe(201);
    expect(replay.status).toBe(404);
    expect(bodyText(replay.body)).not.toContain(VISA);
  });

  it("shows nothing of a change made since (409): the key cannot read the token, so the change is news", async () => {
    const { api, owner, checkout } = await setup();
    const first = await createCard(api, checkout, "changed-1");
    const updated = await api.patch(`/tokens/${first.body.id}`, {
      key: owner,
      headers: { "content-type": "application/merge-patch+json" },
      body: { data: { number: "5555555555554444" } },
    });
    const read = await api.get(`/tokens/${first.body.id}`, { key: checkout });

    const replay = await createCard(api, checkout, "changed-1");

    expect(updated.status).toBe(200);
    expect(read.status).toBe(403);
    expect(replay.status).toBe(409);
    expect(bodyText(replay.body)).not.toContain("5555555555554444");
    expect(bodyText(replay.body)).not.toContain("4444");
  });

  it("writes a read entry for each replay that shows data, and no second create entry", async () => {
    const { api, checkout, managementKey } = await setup();
    const first = await createCard(api, checkout, "audit-1");
    const replay = await createCard(api, checkout, "audit-1");

    const logs = await api.get<{ data: { operation: string; message: string }[] }>(
      `/logs?entity_id=${first.body.id}`,
      { key: managementKey },
    );
    const operations = logs.body.data.map((entry) => entry.operation).sort();

    expect(replay.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(operations).toEqual(["create", "read"]);
  });
});

describe("attack: an idempotent react replaying data it detokenized", () => {
  async function reactorSetup() {
    const reactor = await createReactor(svc, {
      formula: {
        name: "Echo",
        code: "module.exports = async (req) => ({ raw: { cvc: req.args.card.cvc, number: req.args.card.number } });",
      },
      permissions: ["token:create", "token:use"],
      reactorName: "echo",
    });
    const { api, app } = reactor;
    const owner = await appKey(api, reactor.tenant.managementKey, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
    });
    const token = await api.post<TokenBody>("/tokens", { key: app.key, body: { type: "card", data: card } });
    const react = (idempotencyKey: string) =>
      api.post(`/reactors/${reactor.reactorId}/react`, {
        key: app.key,
        body: { args: { card: `{{ ${token.body.id} }}` } },
        headers: { "svc-idempotency-key": idempotencyKey },
      });
    return { api, owner, tokenId: token.body.id, react };
  }

  it("replays the answer within the data's lifetime, and nothing of a cvc past its hour (404)", async () => {
    const { api, react } = await reactorSetup();
    const first = await react("react-cvc-1");
    const early = await react("react-cvc-1");

    await advanceClock(api, 3601);
    const late = await react("react-cvc-1");

    expect(first.status).toBe(200);
    expect(bodyText(first.body)).toContain(CVC);
    expect(early.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(early.body).toEqual(first.body);
    expect(late.status).toBe(404);
    expect(bodyText(late.body)).not.toContain(CVC);
    expect(bodyText(late.body)).not.toContain(VISA);
  });

  it("replays nothing of a token deleted since (404)", async () => {
    const { api, owner, tokenId, react } = await reactorSetup();
    const first = await react("react-deleted-1");
    const deleted = await api.delete(`/tokens/${tokenId}`, { key: owner });

    const replay = await react("react-deleted-1");

    expect(first.status).toBe(200);
    expect(deleted.status).toBe(204);
    expect(replay.status).toBe(404);
    expect(bodyText(replay.body)).not.toContain(VISA);
  });
});
