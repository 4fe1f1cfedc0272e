/**
 * Review finding: a react-async result keeps the tokens its code created (`tokenize`) as they were presented
 * at run time, data and cvc included, and answers them for 24 hours whatever became of those tokens: after the
 * card's cvc hour, after the token was deleted. A synchronous react's idempotent replay presents them again
 * from the store (presentAgain), so it shows neither.
 */
import { describe, expect, it } from "vitest";
import { bodyText } from "#test/support/http.ts";
import { reactedAsync, reactingTenant } from "#test/support/reactors.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { VISA } from "#test/support/tokens.ts";

const svc = useService();
const CVC = "731";

async function setup() {
  // The caller may read (reveal) and delete what it gets: a back end that reacts, keeps the card a moment, then
  // deletes it.
  const { api, managementKey, acting, caller } = await reactingTenant(svc, [
    "token:use",
    "token:read",
    "token:delete",
  ]);
  const code = `module.exports = async () => ({ tokenize: { card: { type: "card", data: { number: "${VISA}", expiration_month: 12, expiration_year: 2030, cvc: "${CVC}" } } } });`;
  const {
    reactorId,
    requestId,
    result: first,
  } = await reactedAsync(api, managementKey, { actingId: acting.id, caller, code });
  const result = () => api.get(`/reactors/${reactorId}/results/${requestId}`, { key: caller });
  const tokenId = (first.body as { tokens: { card: { id: string } } }).tokens.card.id;
  return { api, managementKey, caller, first, result, tokenId };
}

describe("react-async result: tokens the code created", () => {
  it("no longer shows the cvc past its hour", async () => {
    const { api, caller, first, result, tokenId } = await setup();
    expect(first.status).toBe(200);
    expect(bodyText(first.body)).toContain(CVC);
    await advanceTestClock(svc, 3601);
    const token = await api.get(`/tokens/${tokenId}`, { key: caller });
    expect(bodyText(token.body)).not.toContain(CVC); // the vault itself no longer answers the cvc
    const again = await result();
    expect(bodyText(again.body)).not.toContain(CVC);
  });

  it("no longer shows a token deleted since", async () => {
    const { api, caller, first, result, tokenId } = await setup();
    expect(bodyText(first.body)).toContain(VISA);
    expect((await api.delete(`/tokens/${tokenId}`, { key: caller })).status).toBe(204);
    const again = await result();
    expect(bodyText(again.body)).not.toContain(VISA);
    expect(again.status).toBe(404);
  });

  it("logs the token's data handed out again by each read of the result", async () => {
    const { api, managementKey, result, tokenId } = await setup();
    expect((await result()).status).toBe(200);
    const logs = await api.get<{ data: { message?: string; action?: string }[] }>(
      `/logs?entity_id=${tokenId}&size=100`,
      { key: managementKey },
    );
    const again = logs.body.data.filter((e) => /react-async result/.test(String(e.message)));
    // The poll's first 200 and this read: one entry each.
    expect(again.length).toBeGreaterThanOrEqual(2);
  });
});
