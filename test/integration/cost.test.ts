import { describe, expect, it } from "vitest";
import { UsageMeter } from "#shared/composition/usage-meter.ts";
import { useEnv } from "#test/support/env.ts";
import { useService } from "#test/support/service.ts";
import { tenantWithOwner, VISA } from "#test/support/tokens.ts";

/**
 * What requests cost in DynamoDB capacity, through the meter `npm run cost` uses (docs/scale.md): the waste the
 * cost table showed stays removed.
 */
const meter = new UsageMeter();
// No rate-limit leases: a lease's counter write falling into a measured request would be counted with it.
useEnv({ SVC_RATE_LIMIT_PER_SECOND: "0" });
const svc = useService({ meter });

describe("capacity a request costs", () => {
  it("answers a deduplicated create of an existing value from its claim, writing only the read entry", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const body = {
      type: "card",
      data: { number: VISA, expiration_month: 12, expiration_year: 2031 },
      deduplicate_token: true,
    };
    const first = await api.post<{ id: string }>("/tokens", { key: owner, body });

    meter.take();
    const again = await api.post<{ id: string }>("/tokens", { key: owner, body });
    const used = meter.take();

    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    // The read entry ("Existing token returned by deduplication") and its index copy; no cancelled transaction
    // (which DynamoDB bills as the token, claim and audit writes it held: 10 WCU for a card).
    expect(used.writeUnits).toBeLessThanOrEqual(2.5);
    expect(used.readUnits).toBeLessThanOrEqual(4);
  });

  it("keeps a taken id's 409 before deduplication, when the caller chose the id", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const card = (number: string) => ({
      type: "card_number",
      data: number,
      deduplicate_token: true,
    });
    const existing = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: card("4000056655665556"),
    });
    await api.post("/tokens", { key: owner, body: { id: "cost-id-taken", ...card("5555555555554444") } });

    const taken = await api.post("/tokens", {
      key: owner,
      body: { id: "cost-id-taken", ...card("4000056655665556") },
    });
    const free = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: { id: "cost-id-free", ...card("4000056655665556") },
    });

    expect(taken.status).toBe(409);
    expect(free.status).toBe(201);
    expect(free.body.id).toBe(existing.body.id);
  });

  it("creates a new token for a value whose deduplicated token was deleted", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const body = { type: "card_number", data: "4000002500003155", deduplicate_token: true };
    const first = await api.post<{ id: string }>("/tokens", { key: owner, body });
    expect((await api.delete(`/tokens/${first.body.id}`, { key: owner })).status).toBe(204);

    const next = await api.post<{ id: string }>("/tokens", { key: owner, body });
    const again = await api.post<{ id: string }>("/tokens", { key: owner, body });

    expect(next.status).toBe(201);
    expect(next.body.id).not.toBe(first.body.id);
    expect(again.body.id).toBe(next.body.id);
  });
});
