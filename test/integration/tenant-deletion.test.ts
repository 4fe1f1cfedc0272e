/**
 * DELETE /tenants/self: the OWNER ends a tenant. Its data keys and HMAC keys are destroyed at once, every key and
 * session of it answers 401, the sweep purges every item of it within the hour (checked by scanning the whole
 * table), the receipt verifies with the public key and node:crypto as docs/security.md shows, another tenant
 * is untouched, and a record of the deletion stays at the deployment level.
 */
import { createPublicKey, randomUUID, verify } from "node:crypto";
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { purgeDeletedTenants } from "#shared/domain/tenant-purge.ts";
import { client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";
import { itemsNaming, scanTable } from "#test/support/table-scan.ts";
import { appKey, revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

const svc = useService();

interface Receipt {
  tenant_id: string;
  deleted_at: string;
  destroyed_key_versions: string[];
  purge_deadline: string;
  signature: string;
}

/** The documented check (docs/security.md, "Tenant deletion"): the four fields in this order, then verify. */
async function receiptVerifies(receipt: Receipt): Promise<boolean> {
  const res = await fetch(`${svc.url}/.well-known/svc-vault/receipt-key`);
  const key = (await res.json()) as { algorithm: string; public_key_pem: string };
  const payload = JSON.stringify({
    tenant_id: receipt.tenant_id,
    deleted_at: receipt.deleted_at,
    destroyed_key_versions: receipt.destroyed_key_versions,
    purge_deadline: receipt.purge_deadline,
  });
  return verify(
    key.algorithm === "Ed25519" ? null : "sha256",
    Buffer.from(payload),
    createPublicKey(key.public_key_pem),
    Buffer.from(receipt.signature, "base64url"),
  );
}

/**
 * A tenant with some of everything: tokens (a card with its cvc, an expiring one), a session, a member, a proxy;
 * created and joined with idempotency keys, whose records (outside the tenant's partitions) go with the purge too.
 */
async function populatedTenant(name: string) {
  const api = client(svc.url);
  const created = await api.post<{ id: string; management_key: string; management_application_id: string }>(
    "/tenants",
    { key: svc.rootKey, body: { name }, headers: { "svc-idempotency-key": `create-${randomUUID()}` } },
  );
  expect(created.status).toBe(201);
  const tenant = {
    tenantId: created.body.id,
    managementKey: created.body.management_key,
    managementAppId: created.body.management_application_id,
  };
  const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const card = await api.post<TokenBody>("/tokens", {
    key: reader,
    body: {
      type: "card",
      data: { number: VISA, expiration_month: 12, expiration_year: 2031, cvc: "123" },
      search_indexes: ["{{ data.number | last4 }}"],
    },
  });
  expect(card.status, JSON.stringify(card.body)).toBe(201);
  const expiring = await api.post<TokenBody>("/tokens", {
    key: reader,
    body: {
      type: "token",
      data: "soon gone",
      expires_at: new Date(Date.now() + 86_400_000 * 400).toISOString(),
    },
  });
  expect(expiring.status, JSON.stringify(expiring.body)).toBe(201);
  const pub = await appKey(api, tenant.managementKey, { type: "public" });
  const session = await api.post<{ session_key: string; nonce: string }>("/sessions", { key: pub });
  expect(session.status).toBe(201);
  const email = `admin-${name.toLowerCase()}@example.com`;
  expect(
    (await api.post("/tenants/self/invitations", { key: tenant.managementKey, body: { email } })).status,
  ).toBe(201);
  const member = await api.post<{ management_key: string; user: { id: string } }>("/invitations/accept", {
    body: { code: invitationFromOutbox(svc, email).code },
    headers: { "svc-idempotency-key": `join-${randomUUID()}` },
  });
  expect(member.status).toBe(201);
  const proxyApp = await api.post<{ id: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "proxy app", type: "private", permissions: ["token:use"] },
  });
  const proxy = await api.post<{ key: string }>("/proxies", {
    key: tenant.managementKey,
    body: {
      name: "open",
      destination_url: "https://destination.invalid/",
      require_auth: false,
      application: { id: proxyApp.body.id },
    },
  });
  expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
  const laterEmail = `later-${name.toLowerCase()}@example.com`;
  await api.post("/tenants/self/invitations", { key: tenant.managementKey, body: { email: laterEmail } });
  const owner = await api.get<{ owner_id: string }>("/tenants/self", { key: tenant.managementKey });
  return {
    api,
    ...tenant,
    reader,
    pub,
    cardId: card.body.id,
    sessionKey: session.body.session_key,
    proxyKey: proxy.body.key,
    pendingInvitationCode: invitationFromOutbox(svc, laterEmail).code,
    memberKey: member.body.management_key,
    userIds: [owner.body.owner_id, member.body.user.id],
  };
}

describe("DELETE /tenants/self", () => {
  it("shreds the keys at once, revokes every key, answers a receipt that verifies, and the sweep purges every item within the hour; another tenant is untouched", async () => {
    // The idempotency records outside every tenant's partitions (root's create, the anonymous accept) each made.
    const outsideRecords = async () =>
      new Set(
        (await scanTable(svc))
          .filter((i) => /^IDEMP#(?!tenant:)/.test(String(i.PK)))
          .map((i) => `${i.PK} ${i.SK}`),
      );
    const earlier = await outsideRecords();
    const doomed = await populatedTenant("Doomed");
    const doomedRecords = [...(await outsideRecords())].filter((k) => !earlier.has(k));
    const other = await populatedTenant("Other");
    const api = doomed.api;
    const keyItems = (items: Record<string, unknown>[], tenantId: string) =>
      items.filter((i) => i.PK === `TENANT#${tenantId}` && String(i.SK).startsWith("DATAKEY#"));
    const before = await scanTable(svc);
    // The other tenant's lasting items (its session and cvc end within the hour by themselves).
    const lasting = (items: Record<string, unknown>[]) =>
      itemsNaming(items, other.tenantId)
        .filter((i) => /^(TENANT|TOKEN|FP|SEARCH|APIKEY|USER)#/.test(String(i.PK)) && i.entity !== "session")
        .filter((i) => !(String(i.PK).startsWith("APIKEY#") && i.kind === "session"))
        .map((i) => `${i.PK} ${i.SK}`)
        .sort();
    const otherBefore = lasting(before);

    const deleted = await api.delete<Receipt>("/tenants/self", { key: doomed.managementKey });
    const atOnce = await scanTable(svc);
    const afterwards = await Promise.all(
      [doomed.managementKey, doomed.reader, doomed.pub, doomed.sessionKey, doomed.memberKey].map(
        async (key) => (await api.get(`/tokens/${doomed.cardId}`, { key })).status,
      ),
    );
    const again = await api.delete("/tenants/self", { key: doomed.managementKey });
    const proxied = await api.post("/proxy", {
      headers: { "svc-proxy-key": doomed.proxyKey },
      body: { card: `{{ token: ${doomed.cardId} }}` },
    });

    // The crypto-shred: every token unreadable at once (the key items are gone, the tokens not yet).
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(keyItems(before, doomed.tenantId).length).toBeGreaterThanOrEqual(2);
    expect(keyItems(atOnce, doomed.tenantId)).toEqual([]);
    expect(atOnce.some((i) => i.PK === `TOKEN#${doomed.tenantId}#${doomed.cardId}`)).toBe(true);
    expect(afterwards).toEqual([401, 401, 401, 401, 401]);
    expect(again.status).toBe(401);
    expect(proxied.status).toBe(401);
    // A pending invitation no longer makes a member (it would write new items into the deleted tenant).
    const accepted = await api.post("/invitations/accept", { body: { code: doomed.pendingInvitationCode } });
    expect(accepted.status).toBe(400);

    // The receipt.
    const receipt = deleted.body;
    expect(receipt.tenant_id).toBe(doomed.tenantId);
    expect(receipt.destroyed_key_versions).toEqual(
      keyItems(before, doomed.tenantId)
        .map((i) => String(i.SK).slice("DATAKEY#".length))
        .sort(),
    );
    expect(Date.parse(receipt.purge_deadline) - Date.parse(receipt.deleted_at)).toBe(3600_000);
    expect(await receiptVerifies(receipt)).toBe(true);
    expect(await receiptVerifies({ ...receipt, destroyed_key_versions: [] })).toBe(false);
    expect(await receiptVerifies({ ...receipt, tenant_id: other.tenantId })).toBe(false);

    // The purge: an hour on, the sweep has removed every item of the tenant, its members' users included.
    const clock = await api.post<{ sweep: { tenantItemsPurged: number } }>("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: 3600 },
    });
    expect(clock.status).toBe(200);
    expect(clock.body.sweep.tenantItemsPurged).toBeGreaterThan(10);
    const after = await scanTable(svc);
    const left = itemsNaming(after, doomed.tenantId).filter(
      (i) => !String(i.PK).startsWith(`TENANTDELETION#`),
    );
    expect(left).toEqual([]);
    for (const userId of doomed.userIds) expect(itemsNaming(after, userId)).toEqual([]);
    // Its create's and its member's join's answers (sealed, naming the tenant and the member's e-mail) went too:
    // until 28 Nov 2026 they stayed up to 24 h past the purge.
    expect(doomedRecords).toHaveLength(2);
    const outsideAfter = await outsideRecords();
    expect(doomedRecords.filter((k) => outsideAfter.has(k))).toEqual([]);

    // What outlives the tenant: the deployment-level record with the receipt, and its audit entries.
    const record = after.filter((i) => i.PK === `TENANTDELETION#${doomed.tenantId}`);
    expect(record.find((i) => i.SK === "META")).toMatchObject({ receipt, purged_at: expect.any(String) });
    const logged = record.filter((i) => String(i.SK).startsWith("LOG#"));
    expect(logged.map((i) => `${i.entity_type} ${i.operation}`).sort()).toEqual(
      [
        "tenant delete",
        "tenant delete",
        ...receipt.destroyed_key_versions.map(() => "tenant_key delete"),
      ].sort(),
    );
    expect(after.some((i) => i.PK === "TENANTDELETION#PENDING")).toBe(false);

    // The other tenant: every item and every key as before.
    const read = await api.get<TokenBody>(`/tokens/${other.cardId}`, { key: other.reader });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ number: VISA });
    expect((await api.get("/tenants/self", { key: other.memberKey })).status).toBe(200);
    expect(lasting(after)).toEqual(otherBefore);
    expect(otherBefore.length).toBeGreaterThan(10);
  });

  it("erases a removed member's user (e-mail, names) with its membership, and the tenant's purge every user it had", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Erased");
    const email = `leaver-${randomUUID()}@example.com`;
    const invited = await api.post("/tenants/self/invitations", {
      key: tenant.managementKey,
      body: { email },
    });
    expect(invited.status).toBe(201);
    const joined = await api.post<{ id: string; user: { id: string } }>("/invitations/accept", {
      body: { code: invitationFromOutbox(svc, email).code, first_name: "Lea", last_name: "Verschwinden" },
    });
    expect(joined.status).toBe(201);
    expect(itemsNaming(await scanTable(svc), email).length).toBeGreaterThan(0);

    const removed = await api.delete(`/tenants/self/members/${joined.body.id}`, {
      key: tenant.managementKey,
    });
    expect(removed.status).toBe(204);
    // Before: the user item stayed for good, unreachable from the tenant's members (lifecycle review).
    const after = await scanTable(svc);
    expect(after.filter((i) => i.PK === `USER#${joined.body.user.id}`)).toEqual([]);
    expect(itemsNaming(after, "Verschwinden")).toEqual([]);
    // The members' users are named after their tenant, so its purge's scan finds them whatever its members say.
    const users = after.filter((i) => String(i.PK).startsWith("USER#") && i.tenant_id === tenant.tenantId);
    expect(users).toHaveLength(1);
  });

  it("answers the receipt even when the shred's later writes fail; the key items they left go with the purge", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Many keys");
    const reader = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
    // Enough key versions that the shred takes more than one write: a data key a 30-day period, each with a
    // token (rotations by hand are bounded by the HMAC versions they leave live; the clock moves without a sweep).
    for (let i = 0; i < 52; i++) {
      svc.service.deps.testClock?.advance(30 * 86_400);
      const made = await api.post("/tokens", { key: reader, body: { type: "token", data: `value ${i}` } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    const keyItems = async () =>
      (await scanTable(svc)).filter(
        (i) => i.PK === `TENANT#${tenant.tenantId}` && String(i.SK).startsWith("DATAKEY#"),
      );
    const before = await keyItems();
    expect(before.length).toBeGreaterThan(50);

    // DynamoDB fails every write after the shred's first (the one with the tombstone).
    const dynamo = svc.service.deps.dynamo;
    const send = dynamo.send.bind(dynamo);
    let writes = 0;
    dynamo.send = ((command: unknown, ...rest: unknown[]) =>
      command instanceof TransactWriteCommand && ++writes > 1
        ? Promise.reject(Object.assign(new Error("service unavailable"), { name: "ServiceUnavailable" }))
        : (send as (...args: unknown[]) => Promise<unknown>)(command, ...rest)) as typeof dynamo.send;
    let deleted: Awaited<ReturnType<typeof api.delete<Receipt>>>;
    try {
      deleted = await api.delete<Receipt>("/tenants/self", { key: tenant.managementKey });
    } finally {
      dynamo.send = send;
    }

    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(writes).toBeGreaterThan(1);
    expect(await receiptVerifies(deleted.body)).toBe(true);
    expect(deleted.body.destroyed_key_versions).toHaveLength(before.length);
    const left = await keyItems();
    expect(left.length).toBeGreaterThan(0); // the failed writes' share
    expect((await api.get("/tenants/self", { key: tenant.managementKey })).status).toBe(401);
    expect((await api.get("/tokens", { key: reader })).status).toBe(401);

    const clock = await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });
    expect(clock.status).toBe(200);
    expect(
      itemsNaming(await scanTable(svc), tenant.tenantId).filter(
        (i) => !String(i.PK).startsWith("TENANTDELETION#"),
      ),
    ).toEqual([]);
    // Every destroyed version's audit entry was in the first write.
    const logged = (await scanTable(svc)).filter(
      (i) => i.PK === `TENANTDELETION#${tenant.tenantId}` && i.entity_type === "tenant_key",
    );
    expect(logged).toHaveLength(before.length);
  });

  it("purges deleted tenants earliest deletion first, whatever their ids", async () => {
    // Before: in tenant-id order, so a tenant with a lower id deleted later took every run's purge time (review of
    // 27 Nov 2026).
    const api = client(svc.url);
    const [first, second] = [await createTenant(api, svc.rootKey), await createTenant(api, svc.rootKey)];
    expect((await api.delete("/tenants/self", { key: second.managementKey })).status).toBe(200);
    svc.service.deps.testClock?.advance(1800);
    expect((await api.delete("/tenants/self", { key: first.managementKey })).status).toBe(200);
    svc.service.deps.testClock?.advance(600); // past both grace periods

    await purgeDeletedTenants(svc.service.deps, undefined, 1); // one page of the table

    const pending = await svc.service.deps.tenantPurge.pending();
    const ofSecond = pending.find((p) => p.tenantId === second.tenantId);
    expect(ofSecond === undefined || ofSecond.cursor !== undefined).toBe(true); // its purge went first
    expect(pending.find((p) => p.tenantId === first.tenantId)?.cursor).toBeUndefined();
  });
});
