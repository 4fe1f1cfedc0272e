/**
 * Attack on the key-custody fix (3c00d89): a data key left under the deployment's key by a move cut short now
 * opens only while the tenant's current key would re-encrypt it. The same cut-short move from one customer key
 * (A) to another (B) leaves data keys under A, and TenantKeyWrapper.unwrap opens those with A alone, never asking
 * B: the customer disables B (the key its custody names, the one GET /tenants/self/keys shows) to lock its
 * data, and the card is still read, 200 with its number.
 */
import { describe, expect, it } from "vitest";
import {
  createLocalCustomerKey,
  setLocalCustomerKeyEnabled,
} from "#shared/adapters/local/local-customer-keys.ts";
import { DEFAULT_KEYRING_OPTIONS } from "#shared/domain/crypto/keyring.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService();
const kmsDir = () => svc.service.deps.config.localKmsDir ?? "";
const CARD = { number: VISA, expiration_month: 12, expiration_year: 2031 };

describe("BYOK: a move from one customer key to another cut short", () => {
  it("a data key left under the earlier customer key does not open once the tenant's current key is disabled", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const card = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "card", data: CARD } });
    expect(card.status).toBe(201);
    const nameA = `first-${tenant.tenantId}`;
    const nameB = `second-${tenant.tenantId}`;
    const keyA = createLocalCustomerKey(kmsDir(), nameA);
    const keyB = createLocalCustomerKey(kmsDir(), nameB);

    // Every data key moves under A.
    const first = await api.put("/tenants/self/keys/kms", {
      key: tenant.managementKey,
      body: { key_arn: keyA },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);

    // The move to B is cut short: the ReEncrypt of the token data key fails (a throttle, a timeout).
    const customerKeys = svc.service.deps.customerKeys as unknown as {
      reEncrypt: (w: Buffer, c: Record<string, string>, from?: string, to?: string) => Promise<Buffer>;
    };
    const original = customerKeys.reEncrypt.bind(customerKeys);
    customerKeys.reEncrypt = async (wrapped, context, from, to) => {
      if (from === keyA && /^k\d+$/.test(context.key_id ?? ""))
        throw new Error("ThrottlingException: rate exceeded");
      return original(wrapped, context, from, to);
    };
    let second: Awaited<ReturnType<typeof api.put>>;
    try {
      second = await api.put("/tenants/self/keys/kms", {
        key: tenant.managementKey,
        body: { key_arn: keyB },
      });
    } finally {
      customerKeys.reEncrypt = original;
    }
    expect(second.status).toBeGreaterThanOrEqual(500);
    const keys = await api.get<{ custody?: { key_arn: string; keys_not_moved: number } }>(
      "/tenants/self/keys",
      {
        key: tenant.managementKey,
      },
    );
    // The tenant's custody names B.
    expect(keys.body.custody?.key_arn).toBe(keyB);

    // The customer disables B, the key its custody names, to lock its data; A stays as it was (say, kept for
    // another use, or the customer does not know a move can leave keys behind under it).
    setLocalCustomerKeyEnabled(kmsDir(), nameB, false);
    await advanceTestClock(svc, DEFAULT_KEYRING_OPTIONS.cacheSeconds + 1);
    const read = await api.get<TokenBody>(`/tokens/${card.body.id}`, { key: owner });
    // Fail closed, as for a key left under the deployment's key (it answered 200 with the card's number).
    expect(read.status, JSON.stringify(read.body)).toBe(423);
    expect(JSON.stringify(read.body)).not.toContain(VISA);
  });
});
