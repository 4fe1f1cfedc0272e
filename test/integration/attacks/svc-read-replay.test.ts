/**
 * Attack (review round 6): a react whose code reads a token through `req.svc` (as the reactor's application, which
 * may reveal) answered from that data, and its idempotent replay handed the data out again after the token was
 * deleted, after the application's reveal rule was taken away, and a cvc past its hour. The run now binds its
 * answer to the tokens the svc calls handed data from and to the acting application's grant (DataRead).
 */
import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { reactionResult } from "#test/support/reactors.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService();
const permissions = ["token:read", "token:create", "token:use"];
const rules = (transform: string) => [{ priority: 1, container: "/", transform, permissions }];

async function setup(data: unknown, returns: string, id?: string) {
  const api = client(svc.url);
  const { managementKey } = await createTenant(api, svc.rootKey);
  const owner = await appKey(api, managementKey, { type: "private", permissions: ALL_TOKEN_PERMISSIONS });
  const acting = await api.post<{ id: string }>("/applications", {
    key: managementKey,
    body: { name: "reactor app", type: "private", rules: rules("reveal") },
  });
  // The caller holds token:use only (what react requires); it may not read the token itself.
  const caller = await appKey(api, managementKey, { type: "private", permissions: ["token:use"] });
  const code = `module.exports = async (req) => { const t = await req.svc.tokens.retrieve(req.args.id); return { raw: { shown: ${returns} } }; };`;
  const formula = await api.post<{ id: string }>("/reactor-formulas", {
    key: managementKey,
    body: { name: "reader", type: "private", code, request_parameters: [{ name: "id", type: "string" }] },
  });
  const reactor = await api.post<{ id: string }>("/reactors", {
    key: managementKey,
    body: { name: "reader", formula: { id: formula.body.id }, application: { id: acting.body.id } },
  });
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  const token = await api.post<TokenBody>("/tokens", {
    key: owner,
    body: { type: "card", data, ...(id ? { id } : {}) },
  });
  const react = (key: string) =>
    api.post(`/reactors/${reactor.body.id}/react`, {
      key: caller,
      body: { args: { id: token.body.id } },
      headers: { "svc-idempotency-key": key },
    });
  const reactAsync = async () => {
    const accepted = await api.post<{ asyncReactorRequestId: string }>(
      `/reactors/${reactor.body.id}/react-async`,
      {
        key: caller,
        body: { args: { id: token.body.id } },
      },
    );
    expect(accepted.status).toBe(202);
    const requestId = accepted.body.asyncReactorRequestId;
    // The first answer waits for the run; later ones are read as they are.
    await reactionResult(api, caller, reactor.body.id, requestId);
    return () => api.get(`/reactors/${reactor.body.id}/results/${requestId}`, { key: caller });
  };
  return { api, managementKey, owner, actingId: acting.body.id, tokenId: token.body.id, react, reactAsync };
}

const card = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: "987" };

describe("attack: replaying a react whose code read token data through req.svc", () => {
  it("is refused once the token is deleted (before: 200 with the number)", async () => {
    const { api, owner, tokenId, react } = await setup(card, "t.data.number");
    const first = await react("svc-read-deleted");
    expect(bodyText(first.body)).toContain(VISA);
    expect((await api.delete(`/tokens/${tokenId}`, { key: owner })).status).toBe(204);
    const replay = await react("svc-read-deleted");
    expect(replay.status).toBe(404);
    expect(bodyText(replay.body)).not.toContain(VISA);
  });

  it("is refused once the acting application may no longer reveal (before: 200 with the number)", async () => {
    const { api, managementKey, actingId, react } = await setup(card, "t.data.number");
    expect(bodyText((await react("svc-read-downgraded")).body)).toContain(VISA);
    const downgraded = await api.put(`/applications/${actingId}`, {
      key: managementKey,
      body: { name: "reactor app", type: "private", rules: rules("redact") },
    });
    expect(downgraded.status).toBe(200);
    const replay = await react("svc-read-downgraded");
    expect(replay.status).toBe(409);
    expect(bodyText(replay.body)).not.toContain(VISA);
  });

  it("is refused past the cvc's hour (before: 200 with the cvc)", async () => {
    const { react } = await setup(card, "t.data.cvc");
    expect(bodyText((await react("svc-read-cvc")).body)).toContain("987");
    await advanceTestClock(svc, 3601);
    const replay = await react("svc-read-cvc");
    expect(replay.status).toBe(404);
    expect(bodyText(replay.body)).not.toContain("987");
  });

  it("is refused once the token was deleted and another created under its id (before: 200 with the old number)", async () => {
    const id = `customer-card-${Date.now()}`;
    const { api, owner, react } = await setup(card, "t.data.number", id);
    expect(bodyText((await react("svc-read-recreated")).body)).toContain(VISA);
    expect((await api.delete(`/tokens/${id}`, { key: owner })).status).toBe(204);
    const other = { ...card, number: "5555555555554444" };
    expect((await api.post("/tokens", { key: owner, body: { type: "card", id, data: other } })).status).toBe(
      201,
    );
    const replay = await react("svc-read-recreated");
    expect(replay.status).toBe(404);
    expect(bodyText(replay.body)).not.toContain(VISA);
  });

  it("replays while nothing changed", async () => {
    const { react } = await setup(card, "t.data.number");
    expect(bodyText((await react("svc-read-same")).body)).toContain(VISA);
    const replay = await react("svc-read-same");
    expect(replay.status).toBe(200);
    expect(replay.headers.get("svc-idempotent-replayed")).toBe("true");
  });

  it("react-async: its result is refused once the token is deleted or past the cvc's hour (before: 200 with them)", async () => {
    const { api, owner, tokenId, reactAsync } = await setup(card, "[t.data.number, t.data.cvc]");
    const result = await reactAsync();
    expect(bodyText((await result()).body)).toContain(VISA);
    expect((await api.delete(`/tokens/${tokenId}`, { key: owner })).status).toBe(204);
    const gone = await result();
    expect(gone.status).toBe(404);
    expect(bodyText(gone.body)).not.toContain(VISA);
    const { reactAsync: again } = await setup(card, "t.data.cvc");
    const cvcResult = await again();
    expect(bodyText((await cvcResult()).body)).toContain("987");
    await advanceTestClock(svc, 3601);
    expect((await cvcResult()).status).toBe(404);
  });
});
