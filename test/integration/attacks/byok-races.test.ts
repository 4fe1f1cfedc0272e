/**
 * Attack (review round 5): BYOK races. A data key generated under the deployment's key while
 * `PUT /tenants/self/keys/kms` runs was stored after the PUT had listed the keys to move, and stayed outside the
 * customer's key (disabling it then locked the old tokens but not the new one); two concurrent PUTs each moved
 * keys under their own key, leaving some under the key the custody record no longer names. A data key is now
 * stored only while the custody it was generated under holds, and a move only while its key is the tenant's.
 */
import { describe, expect, it } from "vitest";
import {
  createLocalCustomerKey,
  setLocalCustomerKeyEnabled,
} from "#shared/adapters/local/local-customer-keys.ts";
import { MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { DEFAULT_KEYRING_OPTIONS } from "#shared/domain/crypto/keyring.ts";
import { unframe } from "#shared/domain/crypto/tenant-key-wrapper.ts";
import { advanceTestClock, useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";
import { deferred } from "#test/support/wait.ts";

const svc = useService();
const kmsDir = () => svc.service.deps.config.localKmsDir ?? "";
const BYOK_FRAME = Buffer.from("svcbyok1", "ascii");
const advance = (seconds: number) => advanceTestClock(svc, seconds);

describe("attack: BYOK while a data key is being made", () => {
  it("a data key made under the deployment's key while the PUT runs ends under the customer's key", async () => {
    const { api, tenant } = await tenantWithOwner(svc);
    const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    const first = await api.post<TokenBody>("/tokens", {
      key: owner,
      body: { type: "token", data: "before" },
    });
    expect(first.status).toBe(201);
    const rotated = await api.post<{ current: number }>("/tenants/self/keys/rotate", {
      key: tenant.managementKey,
    });
    expect(rotated.status).toBe(200);
    const newKeyId = `k${rotated.body.current}`;

    // Hold the deployment's generation of the new version's key (a slow KMS call in another function).
    const { promise: gate, resolve: release } = deferred();
    const { promise: pausedP, resolve: paused } = deferred();
    const original = MasterKeyWrapper.prototype.generateDataKey;
    let armed = true;
    MasterKeyWrapper.prototype.generateDataKey = async function (this: MasterKeyWrapper, context) {
      if (armed && context.tenant_id === tenant.tenantId && context.key_id === newKeyId) {
        armed = false;
        paused();
        await gate;
      }
      return original.call(this, context);
    };
    try {
      const creating = api.post<TokenBody>("/tokens", {
        key: owner,
        body: { type: "token", data: "during" },
      });
      await pausedP;
      const name = `race-${tenant.tenantId}`;
      const keyArn = createLocalCustomerKey(kmsDir(), name);
      const set = await api.put("/tenants/self/keys/kms", {
        key: tenant.managementKey,
        body: { key_arn: keyArn },
      });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      release();
      const during = await creating;
      expect(during.status).toBe(201);

      const keys = (await scanTable(svc)).filter(
        (i) => i.PK === `TENANT#${tenant.tenantId}` && String(i.SK).startsWith("DATAKEY#"),
      );
      const unframed = keys
        .filter((k) => !Buffer.from(String(k.wrapped), "base64").subarray(0, 8).equals(BYOK_FRAME))
        .map((k) => k.SK);

      // The customer disables its key; the data-key cache lapses.
      setLocalCustomerKeyEnabled(kmsDir(), name, false);
      await advance(DEFAULT_KEYRING_OPTIONS.cacheSeconds + 1);
      const readOld = await api.get(`/tokens/${first.body.id}`, { key: owner });
      const readNew = await api.get<TokenBody>(`/tokens/${during.body.id}`, { key: owner });
      expect(readOld.status).toBe(423);
      expect(unframed).toEqual([]);
      expect(readNew.status).toBe(423);
    } finally {
      MasterKeyWrapper.prototype.generateDataKey = original;
      release();
    }
  });
});

describe("attack: two BYOK PUTs at once", () => {
  it("leave every data key under the key the custody record names (the later PUT wins, the other answers 409)", async () => {
    const mismatches: string[] = [];
    for (let round = 0; round < 6; round++) {
      const { api, tenant } = await tenantWithOwner(svc);
      const owner = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
      await api.post("/tokens", {
        key: owner,
        body: { type: "token", data: "x", search_indexes: ["{{ data }}"] },
      });
      await api.post("/tenants/self/keys/rotate", { key: tenant.managementKey });
      await api.post("/tokens", {
        key: owner,
        body: { type: "token", data: "y", search_indexes: ["{{ data }}"] },
      });
      const a = createLocalCustomerKey(kmsDir(), `a-${tenant.tenantId}`);
      const b = createLocalCustomerKey(kmsDir(), `b-${tenant.tenantId}`);
      const [ra, rb] = await Promise.all([
        api.put("/tenants/self/keys/kms", { key: tenant.managementKey, body: { key_arn: a } }),
        api.put("/tenants/self/keys/kms", { key: tenant.managementKey, body: { key_arn: b } }),
      ]);
      const items = (await scanTable(svc)).filter((i) => i.PK === `TENANT#${tenant.tenantId}`);
      const custody = items.find((i) => i.SK === "KEYCUSTODY")?.key_arn;
      const under = items
        .filter((i) => String(i.SK).startsWith("DATAKEY#"))
        .map(
          (i) =>
            `${i.SK}=${unframe(Buffer.from(String(i.wrapped), "base64"))
              .keyArn?.split("/")[1]
              ?.slice(0, 1)}`,
        );
      expect([ra.status, rb.status]).toContain(200);
      for (const status of [ra.status, rb.status]) expect([200, 409]).toContain(status);
      for (const u of under)
        if (!u.endsWith(`=${String(custody).split("/")[1]?.slice(0, 1)}`)) mismatches.push(`${round}:${u}`);
    }
    expect(mismatches).toEqual([]);
  });
});
