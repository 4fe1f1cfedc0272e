import { describe, expect, it } from "vitest";
import { windowLengthMs } from "#shared/domain/rate-limit.ts";
import { useEnv } from "#test/support/env.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, VISA } from "#test/support/tokens.ts";

/**
 * Front-end review: a tenant's public key is in every shopper's browser (the checkout page's source), yet it
 * draws on the one budget all of the tenant's keys share. Anyone who copies it from the page can spend that
 * budget with unauthenticated-cost calls (POST /sessions, POST /tokens) and the merchant's back end (its private
 * key, its proxies) is answered 429 for the rest of every window.
 */
useEnv({ SVC_RATE_LIMIT_PER_SECOND: "0.2", SVC_RATE_LIMIT_BURST: "6" });

const svc = useService();
const WINDOW_MS = windowLengthMs({ ratePerSecond: 0.2, burst: 6 });

describe("front-end review: a public key copied from the page starves the tenant's back end", () => {
  it("a flood with the public key makes the back end's private-key reads answer 429", async () => {
    const api = client(svc.url);
    const merchant = await createTenant(api, svc.rootKey, "Merchant");
    const pub = await appKey(api, merchant.managementKey, { type: "public", permissions: ["token:create"] });
    const backend = await appKey(api, merchant.managementKey, { type: "private", rules: revealEverything });
    // Start of a fresh window, then the back end stores a card (one request of its budget).
    const now = svc.service.deps.clock.now().getTime();
    const advance = Math.ceil((WINDOW_MS - (now % WINDOW_MS)) / 1000);
    expect(
      (await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: advance } })).status,
    ).toBe(200);
    const card = await api.post<{ id: string }>("/tokens", {
      key: backend,
      body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2040 } },
    });
    expect(card.status).toBe(201);

    // The attacker: only the public key, as any visitor of the checkout page holds it.
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push((await api.post("/sessions", { key: pub })).status);
    // The merchant's back end, reading its own token with its private key.
    const read = await api.get(`/tokens/${card.body.id}`, { key: backend });
    console.log(JSON.stringify({ flood, backendRead: read.status }));
    // Expected of a vault that keeps browser keys from starving the back end: the back end still answers.
    expect(read.status).toBe(200);
  });
});
