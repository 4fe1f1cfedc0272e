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

  it("searches the value's lookup partitions of every token type in one round trip", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const indexed = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: { type: "card_number", data: "4000056655665556", search_indexes: ["{{ data }}"] },
    });

    meter.take();
    const found = await api.post<{ data: { id: string }[] }>("/v2/tokens/search", {
      key: owner,
      body: { query: "data:4000056655665556" },
    });
    const used = meter.take();

    expect(found.status).toBe(200);
    expect(found.body.data.map((token) => token.id)).toEqual([indexed.body.id]);
    // The lookup queries (one per token type, at once), the BatchGet of the matches, their read entry.
    expect(used.serialCalls).toBeLessThanOrEqual(3);
  });

  it("pages through the matches of several token types' partitions, each match once", async () => {
    const { api, owner } = await tenantWithOwner(svc);
    const value = "5555555555554444";
    const ids: string[] = [];
    for (const type of ["token", "card_number", "token"]) {
      const made = await api.post<{ id: string }>("/tokens", {
        key: owner,
        body: { type, data: value, search_indexes: ["{{ data }}"] },
      });
      ids.push(made.body.id);
    }

    const seen: string[] = [];
    let start: string | undefined;
    for (let page = 0; page < 6; page++) {
      const res = await api.post<{ data: { id: string }[]; pagination: { next?: string } }>(
        "/v2/tokens/search",
        {
          key: owner,
          body: { query: `data:${value}`, size: 1, ...(start ? { start } : {}) },
        },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((token) => token.id));
      start = res.body.pagination.next;
      if (!start) break;
    }

    expect(start).toBeUndefined();
    expect(seen.sort()).toEqual([...ids].sort());
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
