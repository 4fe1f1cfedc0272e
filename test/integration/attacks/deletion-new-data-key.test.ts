import { describe, expect, it } from "vitest";
import { useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { revealEverything, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Review (key custody): the crypto-shred deletes every wrapped data key of the tenant, and the keyring checks the
 * tombstone before serving a key. A request that passed that check just before the deletion (in the deleting
 * process too; in any other within SVC_AUTH_CACHE_SECONDS) found no stored key, made a new one and stored it: a
 * fresh wrapped data key of the deleted tenant, with the token sealed under it beside it, readable from the table
 * (a backup, a PITR restore) with the deployment's KMS key until the purge, and named by no receipt.
 */
const svc = useService();

describe("attack: a data key made for a tenant deleted meanwhile", () => {
  it("no wrapped data key of the tenant is stored after its tombstone", async () => {
    const { api, tenant, owner } = await tenantWithOwner(svc, revealEverything);

    // The first seal of the tenant looks its key up after the keyring's live check: the deletion lands there.
    const store = (
      svc.service.deps.keyring as unknown as { store: { get: (t: string, k: string) => unknown } }
    ).store;
    const original = store.get.bind(store);
    let entered!: () => void;
    const inKeyring = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const deleted = new Promise<void>((resolve) => {
      release = resolve;
    });
    store.get = async (tenantId: string, keyId: string) => {
      if (tenantId === tenant.tenantId) {
        entered();
        await deleted;
      }
      return original(tenantId, keyId);
    };
    try {
      const create = api.post("/tokens", { key: owner, body: { type: "token", data: "written as it ends" } });
      await inKeyring;
      const receipt = await api.delete("/tenants/self", { key: tenant.managementKey });
      expect(receipt.status).toBe(200);
      release();
      const created = await create;
      expect(created.status).not.toBe(201);
    } finally {
      store.get = original;
    }

    const keyItems = (await scanTable(svc)).filter(
      (item) => item.PK === `TENANT#${tenant.tenantId}` && String(item.SK).startsWith("DATAKEY#"),
    );
    expect(keyItems.map((item) => item.SK)).toEqual([]);
  });
});
