/**
 * Bring your own key, end to end on the local stand-in for a customer's KMS key (a key file of
 * SVC_LOCAL_KMS_DIR, behind the same key-wrapper port as KMS): PUT /tenants/self/keys/kms checks the key, then
 * re-wraps every data key of the tenant under it (one re-wrap per data key, none per token); tokens stay
 * readable; new data keys are generated under it; the customer disabling the key locks the tenant (423
 * problem+json) once the cached data keys lapse (5 minutes), enabling it again unlocks it; other tenants never
 * notice.
 */
import { describe, expect, it } from "vitest";
import {
  createLocalCustomerKey,
  localKeyArn,
  setLocalCustomerKeyEnabled,
} from "#shared/adapters/local/local-customer-keys.ts";
import { DEFAULT_KEYRING_OPTIONS } from "#shared/domain/crypto/keyring.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

const svc = useService();
const kmsDir = () => svc.service.deps.config.localKmsDir ?? "";
const CARD = { number: VISA, expiration_month: 12, expiration_year: 2031 };
const BYOK_FRAME = Buffer.from("svcbyok1", "ascii");

const advance = (seconds: number) => advanceTestClock(svc, seconds);

async function dataKeysOf(tenantId: string) {
  return (await scanTable(svc))
    .filter((i) => i.PK === `TENANT#${tenantId}` && String(i.SK).startsWith("DATAKEY#"))
    .map((i) => ({ id: String(i.SK), wrapped: Buffer.from(String(i.wrapped), "base64") }));
}

describe("PUT /tenants/self/keys/kms", () => {
  it("re-wraps the tenant's data keys under its own key; disabling that key answers 423 until it is enabled again", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const bystander = await tenantWithOwner(svc);
    const card = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "card", data: CARD } });
    const theirs = await bystander.api.post<TokenBody>("/tokens", {
      key: bystander.owner,
      body: { type: "token", data: "theirs" },
    });
    const keyArn = createLocalCustomerKey(kmsDir(), `customer-${tenant.tenantId}`);
    const before = await dataKeysOf(tenant.tenantId);

    const set = await api.put<{ key_arn: string; data_keys_rewrapped: number }>("/tenants/self/keys/kms", {
      key: tenant.managementKey,
      body: { key_arn: keyArn },
    });
    const after = await dataKeysOf(tenant.tenantId);
    const readUnderOwnKey = await api.get<TokenBody>(`/tokens/${card.body.id}`, { key: owner });

    expect(set.status, JSON.stringify(set.body)).toBe(200);
    // The data key and the fingerprint key: one re-wrap each, whatever the number of tokens.
    expect(set.body).toMatchObject({ key_arn: keyArn, data_keys_rewrapped: before.length });
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(after.map((k) => k.id)).toEqual(before.map((k) => k.id));
    for (const k of after) expect(k.wrapped.subarray(0, BYOK_FRAME.length)).toEqual(BYOK_FRAME);
    expect(readUnderOwnKey.status).toBe(200);
    expect(readUnderOwnKey.body.data).toMatchObject({ number: VISA });

    // A new rotation period: its data key is generated under the customer's key too.
    await advance(31 * 86_400);
    const later = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "later" },
    });
    expect(later.status).toBe(201);
    const rotated = await dataKeysOf(tenant.tenantId);
    expect(rotated.length).toBe(after.length + 1);
    for (const k of rotated) expect(k.wrapped.subarray(0, BYOK_FRAME.length)).toEqual(BYOK_FRAME);

    // The customer disables the key: once the cached data keys lapse, the tenant is locked, fail closed.
    setLocalCustomerKeyEnabled(kmsDir(), `customer-${tenant.tenantId}`, false);
    await advance(DEFAULT_KEYRING_OPTIONS.cacheSeconds + 1);
    const locked = await api.get(`/tokens/${card.body.id}`, { key: owner });
    const lockedWrite = await api.post("/tokens", { key: owner, body: { type: "token", data: "x" } });
    const bystanderRead = await bystander.api.get(`/tokens/${theirs.body.id}`, { key: bystander.owner });

    expect(locked.status).toBe(423);
    expect(locked.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(locked.body).toMatchObject({ status: 423, type: expect.stringMatching(/key-unavailable$/) });
    expect(JSON.stringify(locked.body)).not.toContain(VISA);
    expect(lockedWrite.status).toBe(423);
    expect(bystanderRead.status).toBe(200);

    // Enabled again: it works at once (a refusal is never cached).
    setLocalCustomerKeyEnabled(kmsDir(), `customer-${tenant.tenantId}`, true);
    const unlocked = await api.get<TokenBody>(`/tokens/${card.body.id}`, { key: owner });
    expect(unlocked.status).toBe(200);
    expect(unlocked.body.data).toMatchObject({ number: VISA });

    // Every key operation is in the tenant's log.
    const logged = await api.get<{ data: { entity_type: string; operation: string }[] }>(
      "/logs?entity_type=tenant_key",
      { key: tenant.managementKey },
    );
    expect(logged.body.data).toEqual([
      expect.objectContaining({ entity_type: "tenant_key", operation: "update" }),
    ]);
  });

  it("refuses a key that does not work, changing nothing: unknown, disabled, or not a key ARN", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc);
    const card = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "card", data: CARD } });
    const disabledName = `disabled-${tenant.tenantId}`;
    const disabled = createLocalCustomerKey(kmsDir(), disabledName);
    setLocalCustomerKeyEnabled(kmsDir(), disabledName, false);
    const before = await dataKeysOf(tenant.tenantId);

    const answers = await Promise.all(
      [
        localKeyArn("no-such-key"),
        disabled,
        "alias/mine",
        "arn:aws:kms:local:000000000000:key/../../etc",
      ].map(
        async (keyArn) =>
          (await api.put("/tenants/self/keys/kms", { key: tenant.managementKey, body: { key_arn: keyArn } }))
            .status,
      ),
    );

    expect(answers).toEqual([400, 400, 400, 400]);
    expect(await dataKeysOf(tenant.tenantId)).toEqual(before);
    expect((await api.get(`/tokens/${card.body.id}`, { key: owner })).status).toBe(200);
  });

  it("a move cut short (a ReEncrypt failing midway, a timeout) leaves no data key outside the customer's key once it disables it", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const card = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "card", data: CARD } });
    expect(card.status).toBe(201);
    const custodyShown = async () =>
      (await api.get<{ custody?: unknown }>("/tenants/self/keys", { key: tenant.managementKey })).body
        .custody;
    // Under the deployment's key, the key list names no custody.
    expect(await custodyShown()).toBeUndefined();
    const name = `cut-${tenant.tenantId}`;
    const keyArn = createLocalCustomerKey(kmsDir(), name);

    // The ReEncrypt of the token data key fails once (a throttle, a network error, the function's timeout).
    const customerKeys = svc.service.deps.customerKeys as unknown as {
      reEncrypt: (
        wrapped: Buffer,
        context: Record<string, string>,
        from?: string,
        to?: string,
      ) => Promise<Buffer>;
    };
    const original = customerKeys.reEncrypt.bind(customerKeys);
    customerKeys.reEncrypt = async (wrapped, context, from, to) => {
      if (/^k\d+$/.test(context.key_id ?? "")) throw new Error("ThrottlingException: rate exceeded");
      return original(wrapped, context, from, to);
    };
    let set: Awaited<ReturnType<typeof api.put>>;
    try {
      set = await api.put("/tenants/self/keys/kms", { key: tenant.managementKey, body: { key_arn: keyArn } });
    } finally {
      customerKeys.reEncrypt = original;
    }
    expect(set.status).toBeGreaterThanOrEqual(500);
    // The custody record says the tenant's keys are under its own key (new keys are generated there) ...
    const custody = (await scanTable(svc)).find(
      (i) => i.PK === `TENANT#${tenant.tenantId}` && i.SK === "KEYCUSTODY",
    );
    expect(custody?.key_arn).toBe(keyArn);

    // ... so the customer, relying on it, disables its key to lock the tenant's data (or to end PITR's window).
    setLocalCustomerKeyEnabled(kmsDir(), name, false);
    await advance(DEFAULT_KEYRING_OPTIONS.cacheSeconds + 1);
    const read = await api.get<TokenBody>(`/tokens/${card.body.id}`, { key: owner });
    // Fail closed: nothing of the tenant opens any more. (It answered 200 with the card number: the data key the
    // cut-short move left under the deployment's key still unwrapped.)
    expect(read.status, JSON.stringify(read.body)).toBe(423);
    const unframed = async () =>
      (await dataKeysOf(tenant.tenantId))
        .filter((k) => !k.wrapped.subarray(0, BYOK_FRAME.length).equals(BYOK_FRAME))
        .map((k) => k.id);
    expect(await unframed()).not.toEqual([]);
    // The operator sees the move is unfinished: the key list counts the keys not under the tenant's key.
    expect(await custodyShown()).toEqual({ key_arn: keyArn, keys_not_moved: (await unframed()).length });

    // The key enabled again, the same PUT finishes the move: every data key under the customer's key.
    setLocalCustomerKeyEnabled(kmsDir(), name, true);
    const again = await api.put("/tenants/self/keys/kms", {
      key: tenant.managementKey,
      body: { key_arn: keyArn },
    });
    expect(again.status).toBe(200);
    expect(await unframed()).toEqual([]);
    expect(await custodyShown()).toEqual({ key_arn: keyArn, keys_not_moved: 0 });
    expect((await api.get(`/tokens/${card.body.id}`, { key: owner })).status).toBe(200);
  });
});
