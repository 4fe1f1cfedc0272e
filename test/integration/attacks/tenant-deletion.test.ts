/**
 * Attack: end or re-key a tenant without being its OWNER. DELETE /tenants/self and PUT /tenants/self/keys/kms
 * are the OWNER member's own key's alone: an ADMIN member's key, an application key (even a management one
 * granted every permission by the owner, or one a member minted), a session, and another tenant's keys get
 * 403 (or act on their own tenant only), and nothing changes. Also: a token id another tenant chose equal to
 * the victim's tenant id does not make the victim's purge touch it, nor the victim's deletion the attacker's.
 */
import { describe, expect, it } from "vitest";
import { createLocalCustomerKey } from "#shared/adapters/local/local-customer-keys.ts";
import { MANAGEMENT_PERMISSIONS } from "#shared/domain/permissions.ts";
import { client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody } from "#test/support/tokens.ts";

const svc = useService();
let keys = 0;

async function victim() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey, "Victim");
  const email = `admin-${tenant.tenantId}@example.com`;
  await api.post("/tenants/self/invitations", { key: tenant.managementKey, body: { email } });
  const admin = await api.post<{ management_key: string }>("/invitations/accept", {
    body: { code: invitationFromOutbox(svc, email).code },
  });
  expect(admin.status).toBe(201);
  // The owner grants a management application everything, tenant:delete and tenant:key:update included.
  const everything = await appKey(api, tenant.managementKey, {
    type: "management",
    permissions: [...MANAGEMENT_PERMISSIONS],
  });
  // And the ADMIN mints one of its own.
  const adminMinted = await appKey(api, admin.body.management_key, {
    type: "management",
    permissions: [...MANAGEMENT_PERMISSIONS],
  });
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", { key: reader, body: { type: "token", data: "kept" } });
  expect(token.status).toBe(201);
  return {
    api,
    tenant,
    adminKey: admin.body.management_key,
    everything,
    adminMinted,
    reader,
    tokenId: token.body.id,
  };
}

describe("only the OWNER member's own key ends or re-keys a tenant", () => {
  it("refuses an ADMIN member's key, management keys granted everything, a private key and a session", async () => {
    const v = await victim();
    const pub = await appKey(v.api, v.tenant.managementKey, { type: "public" });
    const session = await v.api.post<{ session_key: string }>("/sessions", { key: pub });
    const keyArn = createLocalCustomerKey(svc.service.deps.config.localKmsDir ?? "", `attack-${keys++}`);
    const attempts = [v.adminKey, v.everything, v.adminMinted, v.reader, session.body.session_key];

    const deletes = await Promise.all(
      attempts.map(async (key) => (await v.api.delete("/tenants/self", { key })).status),
    );
    const rekeys = await Promise.all(
      attempts.map(
        async (key) => (await v.api.put("/tenants/self/keys/kms", { key, body: { key_arn: keyArn } })).status,
      ),
    );

    expect(deletes).toEqual([403, 403, 403, 403, 403]);
    expect(rekeys).toEqual([403, 403, 403, 403, 403]);
    // Nothing happened: every key works, the data keys are the deployment's.
    for (const key of [v.tenant.managementKey, v.adminKey, v.everything])
      expect((await v.api.get("/tenants/self", { key })).status).toBe(200);
    expect((await v.api.get(`/tokens/${v.tokenId}`, { key: v.reader })).status).toBe(200);
    const custody = await v.api.get<{ data: { entity_type: string }[] }>("/logs?entity_type=tenant_key", {
      key: v.tenant.managementKey,
    });
    expect(custody.body.data).toEqual([]);
  });

  it("another tenant's owner deletes only its own tenant, even with a token id equal to the victim's tenant id", async () => {
    const v = await victim();
    const attacker = await createTenant(v.api, svc.rootKey, "Attacker");
    const attackerReader = await appKey(v.api, attacker.managementKey, {
      type: "private",
      rules: revealEverything,
    });
    // A token of the attacker whose id is the victim's tenant id: its keys name the victim's id.
    const planted = await v.api.post<TokenBody>("/tokens", {
      key: attackerReader,
      body: { id: v.tenant.tenantId, type: "token", data: "planted" },
    });
    expect(planted.status, JSON.stringify(planted.body)).toBe(201);

    const victimDeleted = await v.api.delete("/tenants/self", { key: v.tenant.managementKey });
    await v.api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });
    const plantedAfterPurge = await v.api.get(`/tokens/${v.tenant.tenantId}`, { key: attackerReader });
    const attackerDeleted = await v.api.delete("/tenants/self", { key: attacker.managementKey });

    expect(victimDeleted.status).toBe(200);
    // The victim's purge left the attacker's token alone.
    expect(plantedAfterPurge.status).toBe(200);
    expect(attackerDeleted.status).toBe(200);
  });

  it("an attacker's deletion leaves the victim's keys and tokens working", async () => {
    const v = await victim();
    const attacker = await createTenant(v.api, svc.rootKey, "Attacker");
    expect((await v.api.delete("/tenants/self", { key: attacker.managementKey })).status).toBe(200);
    await v.api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });

    expect((await v.api.get("/tenants/self", { key: v.tenant.managementKey })).status).toBe(200);
    expect((await v.api.get(`/tokens/${v.tokenId}`, { key: v.reader })).status).toBe(200);
  });
});
