import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox, joinMember as joinTenant } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();
const codeFromOutbox = (email: string) => invitationFromOutbox(svc, email).code;

type Created = { id: string; key: string; keys: { id: string }[] };
const joinMember = (api: Client, ownerKey: string) => joinTenant(svc, api, ownerKey);
type Accepted = { id: string; management_key: string; management_application_id: string };

let counter = 0;

async function createApp(api: Client, key: string, body: Record<string, unknown>) {
  return api.post<Created>("/applications", { key, body });
}

async function setup() {
  const api = client(svc.url);
  return { api, ...(await createTenant(api, svc.rootKey)) };
}

describe("attack: a key granting more than it holds", () => {
  it("refuses a narrow management key minting token access or management permissions it lacks (403)", async () => {
    const { api, managementKey } = await setup();
    const narrow = await createApp(api, managementKey, {
      name: "ci",
      type: "management",
      permissions: ["application:create", "application:read", "application:update"],
    });
    const reader = await createApp(api, managementKey, {
      name: "reader",
      type: "private",
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    });
    const ci = narrow.body.key;

    const tokenApp = await createApp(api, ci, {
      name: "all-tokens",
      type: "private",
      permissions: ["token:create", "token:read", "token:update", "token:delete", "token:use"],
    });
    const revealRule = await createApp(api, ci, {
      name: "reveal",
      type: "private",
      rules: [{ priority: 1, container: "/", transform: "reveal", permissions: ["token:read"] }],
    });
    const wideManagement = await createApp(api, ci, {
      name: "admin",
      type: "management",
      permissions: ["tenant:member:delete", "application:delete"],
    });
    const selfWiden = await api.put(`/applications/${narrow.body.id}`, {
      key: ci,
      body: { name: "ci", permissions: ["application:create", "application:delete", "log:read"] },
    });
    const keyForWiderApp = await api.post(`/applications/${reader.body.id}/keys`, { key: ci });
    const within = await createApp(api, ci, {
      name: "ro",
      type: "management",
      permissions: ["application:read"],
    });

    for (const refused of [tokenApp, revealRule, wideManagement, selfWiden, keyForWiderApp]) {
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(refused.body).not.toHaveProperty("key");
    }
    expect(within.status).toBe(201);
  });

  it("refuses other management keys deleting, re-permissioning or rekeying the OWNER's application (403)", async () => {
    const { api, managementKey, managementAppId } = await setup();
    const admin = await joinMember(api, managementKey);
    const ownerKeys = await api.get<{ id: string }[]>(`/applications/${managementAppId}/keys`, {
      key: managementKey,
    });
    const ownerKeyId = ownerKeys.body[0]?.id;
    expect(ownerKeyId).toEqual(expect.any(String));

    const rekey = await api.post(`/applications/${managementAppId}/keys`, { key: admin.management_key });
    const repermission = await api.put(`/applications/${managementAppId}`, {
      key: admin.management_key,
      body: { name: "owned", permissions: ["tenant:read"] },
    });
    const dropKey = await api.delete(`/applications/${managementAppId}/keys/${ownerKeyId}`, {
      key: admin.management_key,
    });
    const remove = await api.delete(`/applications/${managementAppId}`, { key: admin.management_key });
    const removeMember = await api.delete(`/applications/${admin.management_application_id}`, {
      key: managementKey,
    });
    const ownerStillWorks = await api.get("/applications/key", { key: managementKey });
    const adminStillWorks = await api.get("/applications/key", { key: admin.management_key });

    for (const refused of [rekey, repermission, dropKey, remove, removeMember]) {
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
    }
    expect(ownerStillWorks.status).toBe(200);
    expect(adminStillWorks.status).toBe(200);
  });

  it("refuses a key that may only invite making itself an ADMIN member through an invitation (403)", async () => {
    const { api, managementKey } = await setup();
    const inviter = await createApp(api, managementKey, {
      name: "inviter",
      type: "management",
      permissions: ["tenant:invitation:create"],
    });
    const everything = await createApp(api, managementKey, {
      name: "all-management",
      type: "management",
      permissions: [
        "application:create",
        "application:read",
        "tenant:member:read",
        "tenant:invitation:create",
        "tenant:invitation:read",
      ],
    });
    const email = `attacker${Date.now()}${counter++}@evil.example`;

    const invited = await api.post("/tenants/self/invitations", { key: inviter.body.key, body: { email } });
    const byWideKey = await api.post("/tenants/self/invitations", {
      key: everything.body.key,
      body: { email },
    });
    const members = await api.get<{ data: { user: { email: string } }[] }>("/tenants/self/members", {
      key: managementKey,
    });
    const sent = readdirSync(join(svc.service.deps.config.dataDir, "outbox")).some((f) =>
      readFileSync(join(svc.service.deps.config.dataDir, "outbox", f), "utf8").includes(`To: <${email}>`),
    );
    const byOwner = await api.post("/tenants/self/invitations", { key: managementKey, body: { email } });

    for (const refused of [invited, byWideKey]) {
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
    }
    expect(sent).toBe(false);
    expect(members.body.data.map((m) => m.user.email)).not.toContain(email);
    expect(byOwner.status).toBe(201);
    const admin = await api.post<Accepted>("/invitations/accept", { body: { code: codeFromOutbox(email) } });
    expect(admin.status).toBe(201);
    const byMember = await api.post("/tenants/self/invitations", {
      key: admin.body.management_key,
      body: { email: `next${email}` },
    });
    expect(byMember.status).toBe(201);
  });

  it("refuses an invitation whose inviting member was deleted before it was accepted (400)", async () => {
    const { api, managementKey } = await setup();
    const admin = await joinMember(api, managementKey);
    const email = `accomplice${Date.now()}${counter++}@evil.example`;
    const invited = await api.post("/tenants/self/invitations", {
      key: admin.management_key,
      body: { email },
    });
    expect(invited.status).toBe(201);

    const removed = await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey });
    const accepted = await api.post("/invitations/accept", { body: { code: codeFromOutbox(email) } });

    expect(removed.status).toBe(204);
    expect(accepted.status).toBe(400);
    expect(accepted.body).not.toHaveProperty("management_key");
  });

  it("revokes every key a deleted member's credentials minted, directly or through applications it created (401)", async () => {
    const { api, managementKey } = await setup();
    const admin = await joinMember(api, managementKey);
    const direct = await createApp(api, admin.management_key, {
      name: "backend",
      type: "private",
      permissions: ["token:read"],
    });
    const extraKey = await api.post<{ key: string }>(`/applications/${direct.body.id}/keys`, {
      key: admin.management_key,
    });
    const delegate = await createApp(api, admin.management_key, {
      name: "delegate",
      type: "management",
      permissions: ["application:create", "application:read"],
    });
    const transitive = await createApp(api, delegate.body.key, {
      name: "grandchild",
      type: "management",
      permissions: ["application:read"],
    });
    const ownersKeyForBackend = await api.post<{ key: string }>(`/applications/${direct.body.id}/keys`, {
      key: managementKey,
    });
    const minted = [direct.body.key, extraKey.body.key, delegate.body.key, transitive.body.key];
    const before = await Promise.all(minted.map((key) => api.get("/applications/key", { key })));
    // Sessions authorized with a minted key end with it; one the owner's key authorized does not.
    const browser = await createApp(api, managementKey, {
      name: "browser",
      type: "public",
      permissions: ["token:create"],
    });
    const sessionAuthorizedBy = async (key: string) => {
      const session = await api.post<{ session_key: string; nonce: string }>("/sessions", {
        key: browser.body.key,
      });
      await api.post("/sessions/authorize", {
        key,
        body: { nonce: session.body.nonce, permissions: ["token:read"] },
      });
      return session.body.session_key;
    };
    const sessions = [
      await sessionAuthorizedBy(extraKey.body.key),
      await sessionAuthorizedBy(ownersKeyForBackend.body.key),
    ];
    const sessionsBefore = await Promise.all(sessions.map((key) => api.get("/tokens", { key })));

    const deleted = await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey });
    const after = await Promise.all(minted.map((key) => api.get("/applications/key", { key })));
    const ownerMinted = await api.get("/applications/key", { key: ownersKeyForBackend.body.key });
    const sessionsAfter = await Promise.all(sessions.map((key) => api.get("/tokens", { key })));

    expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(deleted.status).toBe(204);
    expect(after.map((r) => r.status)).toEqual([401, 401, 401, 401]);
    expect(ownerMinted.status).toBe(200);
    expect(sessionsBefore.map((r) => r.status)).toEqual([200, 200]);
    expect(sessionsAfter.map((r) => r.status)).toEqual([401, 200]);
  });
  it("revokes what a deleted non-member application's keys minted: keys, and keys of applications created through it (401)", async () => {
    // A leaked CI key the OWNER made (its mints carry minted_by: OWNER, never revoked with a member) planted a
    // management application of its own and a second key for another application; deleting the CI application
    // left both working for good (members review, 27 Nov).
    const { api, managementKey } = await setup();
    const permissions = ["application:create", "application:read", "application:update", "log:read"];
    const ci = await createApp(api, managementKey, { name: "ci", type: "management", permissions });
    const reporting = await createApp(api, managementKey, {
      name: "reporting",
      type: "management",
      permissions: ["log:read"],
    });
    const backdoor = await createApp(api, ci.body.key, { name: "backdoor", type: "management", permissions });
    const grandchild = await createApp(api, backdoor.body.key, {
      name: "grandchild",
      type: "management",
      permissions: ["log:read"],
    });
    const extra = await api.post<{ key: string }>(`/applications/${reporting.body.id}/keys`, {
      key: ci.body.key,
    });
    const rotated = await api.post<{ key: string }>(`/applications/${ci.body.id}/keys`, { key: ci.body.key });
    // Round 28: one hop through a key minted on another application (itself made by the OWNER) escaped the chain.
    const deploy = await createApp(api, managementKey, { name: "deploy", type: "management", permissions });
    const hop = await api.post<{ key: string }>(`/applications/${deploy.body.id}/keys`, { key: ci.body.key });
    const hopped = await api.post<{ key: string }>(`/applications/${deploy.body.id}/keys`, {
      key: hop.body.key,
    });
    const hoppedApp = await createApp(api, hop.body.key, { name: "hopped", type: "management", permissions });
    const minted = [
      backdoor.body.key,
      grandchild.body.key,
      extra.body.key,
      rotated.body.key,
      hop.body.key,
      hopped.body.key,
      hoppedApp.body.key,
    ];
    const before = await Promise.all(minted.map((key) => api.get("/logs", { key })));

    expect((await api.delete(`/applications/${ci.body.id}`, { key: managementKey })).status).toBe(204);
    const after = await Promise.all([ci.body.key, ...minted].map((key) => api.get("/logs", { key })));
    // The applications stay (as a deleted member's do): a member's new key for one of them works.
    const rekeyed = await api.post<{ key: string }>(`/applications/${backdoor.body.id}/keys`, {
      key: managementKey,
    });

    expect(before.map((r) => r.status)).toEqual(minted.map(() => 200));
    expect(after.map((r) => r.status)).toEqual([401, ...minted.map(() => 401)]);
    expect((await api.get("/logs", { key: reporting.body.key })).status).toBe(200);
    expect((await api.get("/logs", { key: deploy.body.key })).status).toBe(200);
    expect((await api.get("/logs", { key: rekeyed.body.key })).status).toBe(200);
  });

  it("keeps a non-member key working through any number of self-rotations (each mint by the key before)", async () => {
    // Round 29: each rotation added another copy of its own application to minted_chain; past 16 the key
    // answered 401 although nothing in its chain was deleted.
    const { api, managementKey } = await setup();
    const ci = await createApp(api, managementKey, {
      name: "ci",
      type: "management",
      permissions: ["application:create", "application:read", "application:update", "log:read"],
    });
    let current = { key: ci.body.key, id: ci.body.keys[0]?.id as string };
    for (let rotation = 1; rotation <= 18; rotation++) {
      const next = await api.post<{ id: string; key: string }>(`/applications/${ci.body.id}/keys`, {
        key: current.key,
      });
      expect(next.status).toBe(201);
      const revoked = await api.delete(`/applications/${ci.body.id}/keys/${current.id}`, {
        key: next.body.key,
      });
      expect(revoked.status, `rotation ${rotation}`).toBe(204);
      current = next.body;
    }
    expect((await api.get("/logs", { key: current.key })).status).toBe(200);
  });

  it("refuses a narrow non-member key deleting a member or resending or withdrawing an invitation (403)", async () => {
    const { api, managementKey } = await setup();
    const admin = await joinMember(api, managementKey);
    const adminMinted = await createApp(api, admin.management_key, {
      name: "admin-backend",
      type: "private",
      permissions: ["token:read"],
    });
    const email = `pending${Date.now()}${counter++}@example.com`;
    const invitation = await api.post<{ id: string; expires_at: string }>("/tenants/self/invitations", {
      key: managementKey,
      body: { email },
    });
    expect(invitation.status).toBe(201);
    const deleter = await createApp(api, managementKey, {
      name: "deleter",
      type: "management",
      permissions: ["tenant:member:delete", "tenant:invitation:delete"],
    });
    const resender = await createApp(api, managementKey, {
      name: "resender",
      type: "management",
      permissions: ["tenant:invitation:create", "tenant:invitation:update", "tenant:invitation:read"],
    });

    const deleted = await api.delete(`/tenants/self/members/${admin.id}`, { key: deleter.body.key });
    const resent = await api.post(`/tenants/self/invitations/${invitation.body.id}/resend`, {
      key: resender.body.key,
    });
    const withdrawn = await api.delete(`/tenants/self/invitations/${invitation.body.id}`, {
      key: deleter.body.key,
    });
    const adminStill = await api.get("/applications/key", { key: adminMinted.body.key });
    const after = await api.get<{ expires_at: string }>(`/tenants/self/invitations/${invitation.body.id}`, {
      key: managementKey,
    });

    for (const refused of [deleted, resent, withdrawn]) {
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
    }
    expect(adminStill.status).toBe(200);
    expect(after.status).toBe(200);
    expect(after.body.expires_at).toBe(invitation.body.expires_at);
    const byMember = await api.post(`/tenants/self/invitations/${invitation.body.id}/resend`, {
      key: admin.management_key,
    });
    expect(byMember.status).toBe(200);
  });
});

describe("attack: a removed member keeps access through a key it minted for someone else's application", () => {
  it("revokes what the member's key for an OWNER-made application minted (401 after the member is deleted)", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey, "Minted");
    const permissions = ["application:create", "application:read", "application:update", "log:read"];
    // A CI application the OWNER made (its minted_by is the OWNER's member id).
    const ci = await api.post<Created>("/applications", {
      key: managementKey,
      body: { name: "ci", type: "management", permissions },
    });
    expect(ci.status).toBe(201);
    const admin = await joinMember(api, managementKey);
    // The ADMIN mints a key of its own for the CI application: minted_by is the ADMIN, revoked with it.
    const adminsKey = await api.post<{ id: string; key: string }>(`/applications/${ci.body.id}/keys`, {
      key: admin.management_key,
    });
    expect(adminsKey.status).toBe(201);
    // With that key (its own credential) the ADMIN mints another key for the same application and a new
    // application with a key: both recorded as minted by the OWNER (the application's minted_by), not the ADMIN.
    const second = await api.post<{ key: string }>(`/applications/${ci.body.id}/keys`, {
      key: adminsKey.body.key,
    });
    expect(second.status).toBe(201);
    const planted = await api.post<Created>("/applications", {
      key: adminsKey.body.key,
      body: { name: "planted", type: "management", permissions },
    });
    expect(planted.status).toBe(201);

    expect((await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey })).status).toBe(204);

    const after = await Promise.all(
      [adminsKey.body.key, second.body.key, planted.body.key].map((key) => api.get("/logs", { key })),
    );
    // Before the fix: [401, 200, 200]: the removed ADMIN keeps the CI application's access for good.
    expect(after.map((r) => r.status)).toEqual([401, 401, 401]);
    // The OWNER's own CI key is untouched.
    expect((await api.get("/logs", { key: ci.body.key })).status).toBe(200);
  });

  it("lets a key another member mints for a deleted member's application act as that member's (docs: 'which are then that member's')", async () => {
    const api = client(svc.url);
    const { managementKey } = await createTenant(api, svc.rootKey, "Rekeyed");
    const permissions = ["application:create", "application:read", "application:update", "log:read"];
    const admin = await joinMember(api, managementKey);
    const delegate = await api.post<Created>("/applications", {
      key: admin.management_key,
      body: { name: "delegate", type: "management", permissions },
    });
    expect(delegate.status).toBe(201);
    expect((await api.delete(`/tenants/self/members/${admin.id}`, { key: managementKey })).status).toBe(204);
    const ownersKey = await api.post<{ key: string }>(`/applications/${delegate.body.id}/keys`, {
      key: managementKey,
    });
    expect(ownersKey.status).toBe(201);
    // Before the fix: 403 "The member whose credentials act here was removed." (the application's minted_by).
    const made = await api.post<Created>("/applications", {
      key: ownersKey.body.key,
      body: { name: "after", type: "management", permissions: ["log:read"] },
    });
    expect(made.status).toBe(201);
    expect((await api.get("/logs", { key: made.body.key })).status).toBe(200);
  });
});
