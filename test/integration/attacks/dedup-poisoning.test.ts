import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { tokenKeys } from "#shared/adapters/dynamodb/token-keys.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, ROUTING, revealEverything, type TokenBody } from "#test/support/tokens.ts";

/**
 * Attack: a public key (token:create, token:update) plants a token that another caller's deduplicating create of
 * a value will hand back, with the attacker's data in it (a payout redirected to the attacker's account): by a
 * fingerprint expression that renders the victim's value (A), or by changing a token's data after it claimed the
 * victim's value (B). A claim only ever answers for a token whose current fingerprint is the new one.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const VICTIM_ACCOUNT = "12345678";
const ATTACKER_ACCOUNT = "99999999";

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const attacker = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create", "token:update"],
  });
  const victim = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const dedup = (account: string) =>
    api.post<TokenBody>("/tokens", {
      key: victim,
      body: {
        type: "bank",
        data: { routing_number: ROUTING, account_number: account },
        deduplicate_token: true,
      },
    });
  /** The attacker's token holding the victim's account (created without deduplication). */
  const plantVictimValue = async () => {
    const planted = await api.post<TokenBody>("/tokens", {
      key: attacker,
      body: { type: "bank", data: { routing_number: ROUTING, account_number: VICTIM_ACCOUNT } },
    });
    expect(planted.status).toBe(201);
    return planted.body;
  };
  return { api, ...tenant, attacker, victim, dedup, plantVictimValue };
}

describe("attack: deduplication poisoning", () => {
  it("A: a fingerprint expression rendering the victim's value never matches the victim's deduplicating create", async () => {
    const { api, attacker, dedup } = await setup();
    const planted = await api.post<TokenBody>("/tokens", {
      key: attacker,
      body: {
        type: "bank",
        data: { routing_number: ROUTING, account_number: ATTACKER_ACCOUNT },
        fingerprint_expression: `{% if data %}${ROUTING}:${VICTIM_ACCOUNT}{% endif %}`,
      },
    });
    expect(planted.status).toBe(201);

    const res = await dedup(VICTIM_ACCOUNT);

    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(planted.body.id);
    expect(res.body.data).toEqual({ routing_number: ROUTING, account_number: VICTIM_ACCOUNT });
  });

  it("B: a token whose data was patched away from the victim's value is not handed back for it", async () => {
    const { api, attacker, dedup, plantVictimValue } = await setup();
    const planted = await plantVictimValue();
    const patched = await api.patch<TokenBody>(`/tokens/${planted.id}`, {
      key: attacker,
      headers: mergePatch,
      body: { data: { account_number: ATTACKER_ACCOUNT } },
    });
    expect(patched.status).toBe(200);

    const res = await dedup(VICTIM_ACCOUNT);

    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(planted.id);
    expect(res.body.data).toEqual({ routing_number: ROUTING, account_number: VICTIM_ACCOUNT });
  });

  it("B in a transaction: the claim moves at commit, the old value is not handed back", async () => {
    const { api, managementKey, dedup } = await setup();
    // Holding a token in a transaction takes token:delete (transaction-locks.test.ts): a private key that has it.
    const attacker = await appKey(api, managementKey, {
      type: "private",
      permissions: ["token:create", "token:update", "token:delete"],
    });
    const plantedRes = await api.post<TokenBody>("/tokens", {
      key: attacker,
      body: { type: "bank", data: { routing_number: ROUTING, account_number: VICTIM_ACCOUNT } },
    });
    expect(plantedRes.status).toBe(201);
    const planted = plantedRes.body;
    const txn = await api.post<{ id: string }>("/transactions", { key: attacker });
    expect(txn.status).toBe(201);
    const patched = await api.patch<TokenBody>(`/tokens/${planted.id}`, {
      key: attacker,
      headers: { ...mergePatch, "svc-transaction-id": txn.body.id },
      body: { data: { account_number: ATTACKER_ACCOUNT } },
    });
    expect(patched.status).toBe(200);
    expect((await api.post(`/transactions/${txn.body.id}/commit`, { key: attacker })).status).toBe(200);

    const res = await dedup(VICTIM_ACCOUNT);
    const again = await dedup(VICTIM_ACCOUNT);

    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(planted.id);
    expect(res.body.data).toEqual({ routing_number: ROUTING, account_number: VICTIM_ACCOUNT });
    expect(again.body.id).toBe(res.body.id);
    // The claim moved with the committed data: the token is found under its new value.
    expect((await dedup(ATTACKER_ACCOUNT)).body.id).toBe(planted.id);
  });

  it("a stale claim (left by a token patched before claims moved) is taken over, never handed back", async () => {
    const { api, tenantId, attacker, victim, dedup, plantVictimValue } = await setup();
    const planted = await plantVictimValue();
    const before = await api.get<TokenBody>(`/tokens/${planted.id}`, { key: victim });
    const patched = await api.patch<TokenBody>(`/tokens/${planted.id}`, {
      key: attacker,
      headers: mergePatch,
      body: { data: { account_number: ATTACKER_ACCOUNT } },
    });
    expect(patched.status).toBe(200);
    // What the store held after such a PATCH before this fix: the old value's claim still naming the token.
    await svc.service.deps.dynamo.send(
      new PutCommand({
        TableName: svc.service.deps.config.tableName,
        Item: {
          ...tokenKeys.fingerprint(tenantId, "bank", before.body.fingerprint),
          entity: "fingerprint",
          token_id: planted.id,
        },
      }),
    );

    const res = await dedup(VICTIM_ACCOUNT);
    const again = await dedup(VICTIM_ACCOUNT);

    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(planted.id);
    expect(res.body.data).toEqual({ routing_number: ROUTING, account_number: VICTIM_ACCOUNT });
    expect(again.body.id).toBe(res.body.id);
  });

  it("still hands back the original token to a legitimate deduplicating create", async () => {
    const { dedup } = await setup();
    const first = await dedup(VICTIM_ACCOUNT);
    expect(first.status).toBe(201);

    const again = await dedup(VICTIM_ACCOUNT);

    expect(again.status).toBeLessThan(300);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.data).toEqual({ routing_number: ROUTING, account_number: VICTIM_ACCOUNT });
  });

  it("after a PATCH of data, the token dedups under its new value and no longer under its old one", async () => {
    const { api, victim, dedup } = await setup();
    const original = await dedup(VICTIM_ACCOUNT);
    expect(original.status).toBe(201);
    const patched = await api.patch<TokenBody>(`/tokens/${original.body.id}`, {
      key: victim,
      headers: mergePatch,
      body: { data: { account_number: "55555555" } },
    });
    expect(patched.status).toBe(200);

    const underNew = await dedup("55555555");
    const underOld = await dedup(VICTIM_ACCOUNT);

    expect(underNew.body.id).toBe(original.body.id);
    expect(underOld.status).toBe(201);
    expect(underOld.body.id).not.toBe(original.body.id);
    expect(underOld.body.data).toEqual({ routing_number: ROUTING, account_number: VICTIM_ACCOUNT });
  });
});
