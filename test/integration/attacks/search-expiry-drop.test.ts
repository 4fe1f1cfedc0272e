/**
 * Review of stop 50 (a50), on the search fix (d231b13): the lookup items a write dropped are now removed only while the token does
 * not hold their hashes again ("a delete and a create under the same id" named as the case). The expiry sweep's
 * deletion still removes the expired token's lookup items unconditionally (sweep-store.ts removeSearchEntries,
 * after its delete): a token created again under the same id with the same value between the two loses its
 * lookup item, and no `data:` search finds it until its next write.
 */
import { BatchWriteCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

const svc = useService();

describe("attack: the expiry sweep's late lookup-item removal", () => {
  it("a token created again under an expired token's id, with its value, stays searchable by it", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const searcher = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const id = "subscription-42";
    const body = (expires_at?: string) => ({
      type: "social_security_number",
      id,
      data: "123-45-6789",
      search_indexes: ["{{ data }}"],
      ...(expires_at ? { expires_at } : {}),
    });
    const soon = new Date(svc.service.deps.clock.now().getTime() + 60_000).toISOString();
    const first = await api.post<TokenBody>("/tokens", { key: owner, body: body(soon) });
    expect(first.status, JSON.stringify(first.body)).toBe(201);

    // The sweep deletes the expired token, then removes its lookup items (a BatchWrite of deletes): in between,
    // the back end creates the token again under its id, with the same value.
    const sweep = svc.service.deps.sweep as unknown as { client: { send: (c: unknown) => Promise<unknown> } };
    const client = sweep.client;
    let again: { status: number } | undefined;
    sweep.client = {
      send: async (command: unknown) => {
        // The removal of its lookup items: a batch of deletes (before), or conditioned on the token (now).
        const removal =
          command instanceof BatchWriteCommand ||
          (command instanceof TransactWriteCommand &&
            JSON.stringify(command.input).includes("search_hashes"));
        if (!again && removal && JSON.stringify(command.input).includes(id)) {
          again = await api.post<TokenBody>("/tokens", { key: owner, body: body() });
        }
        return client.send(command as never);
      },
    } as never;
    try {
      await advanceTestClock(svc, 3700);
    } finally {
      sweep.client = client;
    }
    expect(again?.status).toBe(201);
    const read = await api.get<TokenBody>(`/tokens/${id}`, { key: searcher });
    expect(read.status).toBe(200);
    expect(read.body.data).toBe("123-45-6789");
    // A control: the same value under another id, created after the sweep, is found.
    const control = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { ...body(), id: "control-42" },
    });
    expect(control.status).toBe(201);
    const found = await api.post<{ data: TokenBody[] }>("/v2/tokens/search", {
      key: searcher,
      body: { query: "data:123-45-6789" },
    });
    expect(found.status).toBe(200);
    // The new token holds the value; its lookup item was deleted by the sweep's late removal: not found.
    expect(found.body.data.map((t) => t.id).sort()).toEqual(["control-42", id].sort());
  });
});
