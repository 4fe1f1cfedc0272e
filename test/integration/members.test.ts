import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();
const codeFromOutbox = (email: string) => invitationFromOutbox(svc, email);

type Invitation = { id: string; email: string; status: string; expires_at: string; tenant_id: string };
type Member = {
  id: string;
  role: string;
  user: { id: string; email?: string; first_name?: string };
  management_key?: string;
};
type Page<T> = { pagination: { total_items: number; page_size: number }; data: T[] };

let counter = 0;
const uniqueEmail = () => `invitee${Date.now()}${counter++}@example.com`;

async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const invite = async (email = uniqueEmail()) => {
    const res = await api.post<Invitation>("/tenants/self/invitations", {
      key: tenant.managementKey,
      body: { email },
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  return { api, ...tenant, invite };
}

describe("invitations", () => {
  it("sends an RFC 5322 e-mail with a single-use link; accepting creates an ADMIN member with a management key", async () => {
    const { api, invite, managementKey, tenantId } = await setup();
    const invitation = await invite();
    const { code, eml } = codeFromOutbox(invitation.email);

    const accepted = await api.post<Member>("/invitations/accept", {
      body: { code, first_name: "Ada", last_name: "L" },
    });
    const again = await api.post("/invitations/accept", { body: { code } });
    const asMember = await api.get("/tenants/self", { key: String(accepted.body.management_key) });
    const members = await api.get<Page<Member>>("/tenants/self/members", { key: managementKey });
    const gone = await api.get(`/tenants/self/invitations/${invitation.id}`, { key: managementKey });

    expect(invitation).toMatchObject({ status: "PENDING", tenant_id: tenantId });
    expect(Date.parse(invitation.expires_at) - svc.service.deps.clock.now().getTime()).toBeGreaterThan(
      71 * 3600 * 1000,
    );
    expect(eml).toMatch(
      /^From: .+\r\nTo: <.+>\r\nSubject: .+\r\nDate: .+\r\nMessage-ID: <.+>\r\nMIME-Version: 1\.0\r\n/,
    );
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({
      role: "ADMIN",
      user: { email: invitation.email, first_name: "Ada" },
    });
    expect(accepted.body.management_key).toMatch(/^key_mgt_/);
    expect(again.status).toBe(400);
    expect(asMember.status).toBe(200);
    expect(members.body.data.map((m) => m.role).sort()).toEqual(["ADMIN", "OWNER"]);
    expect(gone.status).toBe(404);
  });

  it("resend extends by 72 hours and invalidates earlier links; delete invalidates links", async () => {
    const { api, invite, managementKey } = await setup();
    const serviceNow = () => svc.service.deps.clock.now().getTime();
    const firstFrom = serviceNow();
    const first = await invite();
    const firstTo = serviceNow();
    const { code: oldCode } = codeFromOutbox(first.email);
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });

    const resentFrom = serviceNow();
    const resent = await api.post<Invitation>(`/tenants/self/invitations/${first.id}/resend`, {
      key: managementKey,
    });
    const resentTo = serviceNow();
    const { code: newCode } = codeFromOutbox(first.email);
    const oldRefused = await api.post("/invitations/accept", { body: { code: oldCode } });
    const second = await invite();
    const { code: deletedCode } = codeFromOutbox(second.email);
    const deleted = await api.delete(`/tenants/self/invitations/${second.id}`, { key: managementKey });
    const deletedRefused = await api.post("/invitations/accept", { body: { code: deletedCode } });
    const newWorks = await api.post("/invitations/accept", { body: { code: newCode } });

    expect(resent.status).toBe(200);
    // 72 hours from the resend (the service clock, read around each request: no bound on how long they took).
    const hours72 = 72 * 3600 * 1000;
    expect(Date.parse(first.expires_at)).toBeGreaterThanOrEqual(firstFrom + hours72);
    expect(Date.parse(first.expires_at)).toBeLessThanOrEqual(firstTo + hours72);
    expect(Date.parse(resent.body.expires_at)).toBeGreaterThanOrEqual(resentFrom + hours72);
    expect(Date.parse(resent.body.expires_at)).toBeLessThanOrEqual(resentTo + hours72);
    expect(resentFrom - firstTo).toBeGreaterThanOrEqual(3600 * 1000);
    expect(newCode).not.toBe(oldCode);
    expect(oldRefused.status).toBe(400);
    expect(deleted.status).toBe(204);
    expect(deletedRefused.status).toBe(400);
    expect(newWorks.status).toBe(201);
  });

  it("shows expired invitations as EXPIRED, filters by status, and refuses their code", async () => {
    const { api, invite, managementKey } = await setup();
    const old = await invite();
    const { code } = codeFromOutbox(old.email);
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 72 * 3600 + 1 } });
    const fresh = await invite();

    const expired = await api.get<Page<Invitation>>("/tenants/self/invitations?status=EXPIRED", {
      key: managementKey,
    });
    const pending = await api.get<Page<Invitation>>("/tenants/self/invitations?status=PENDING", {
      key: managementKey,
    });
    const one = await api.get<Invitation>(`/tenants/self/invitations/${old.id}`, { key: managementKey });
    const refused = await api.post("/invitations/accept", { body: { code } });
    const badStatus = await api.get("/tenants/self/invitations?status=DONE", { key: managementKey });

    expect(expired.body.data.map((i) => i.id)).toEqual([old.id]);
    expect(pending.body.data.map((i) => i.id)).toEqual([fresh.id]);
    expect(one.body.status).toBe("EXPIRED");
    expect(refused.status).toBe(400);
    expect(badStatus.status).toBe(400);
  });

  it("validates e-mail addresses per RFC 5322", async () => {
    const { api, managementKey } = await setup();
    const post = (email: unknown) =>
      api.post("/tenants/self/invitations", { key: managementKey, body: { email } });

    const results = await Promise.all(
      ["not-an-email", "a@b", "Ada <ada@example.com>", "two@@example.com", " ada@example.com", 42].map(post),
    );
    const good = await post("o'brien+tag@sub.example.co.uk");

    expect(results.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 400]);
    expect(good.status).toBe(201);
  });
});

describe("members", () => {
  it("deleting a member revokes its keys at once; the OWNER cannot be deleted", async () => {
    const { api, invite, managementKey } = await setup();
    const invitation = await invite();
    const accepted = await api.post<Member>("/invitations/accept", {
      body: { code: codeFromOutbox(invitation.email).code },
    });
    const members = await api.get<Page<Member>>("/tenants/self/members", { key: managementKey });
    const owner = members.body.data.find((m) => m.role === "OWNER") as Member;

    const worksBefore = await api.get("/tenants/self", { key: String(accepted.body.management_key) });
    const deleted = await api.delete(`/tenants/self/members/${accepted.body.id}`, { key: managementKey });
    const refusedAfter = await api.get("/tenants/self", { key: String(accepted.body.management_key) });
    const ownerRefused = await api.delete(`/tenants/self/members/${owner.id}`, { key: managementKey });
    const missing = await api.delete(`/tenants/self/members/${accepted.body.id}`, { key: managementKey });

    expect(worksBefore.status).toBe(200);
    expect(deleted.status).toBe(204);
    expect(refusedAfter.status).toBe(401);
    expect(ownerRefused.status).toBe(409);
    expect(ownerRefused.body.detail).toContain("OWNER");
    expect(missing.status).toBe(404);
  });

  it("deleting a member whose keys outgrow one write revokes every one of them, each logged once", async () => {
    const { api, invite, managementKey } = await setup();
    const invitation = await invite();
    const accepted = await api.post<Member>("/invitations/accept", {
      body: { code: codeFromOutbox(invitation.email).code },
    });
    const memberKey = String(accepted.body.management_key);
    // Two applications of 20 keys each: 40 keys, 120 items with their lookups and entries, over one write's 100.
    const minted: string[] = [];
    for (const name of ["ci", "cd"]) {
      const app = await api.post<{ id: string; key: string }>("/applications", {
        key: memberKey,
        body: { name, type: "management", permissions: ["application:read"] },
      });
      minted.push(app.body.key);
      for (let i = 1; i < 20; i++) {
        const key = await api.post<{ key: string }>(`/applications/${app.body.id}/keys`, { key: memberKey });
        expect(key.status).toBe(201);
        minted.push(key.body.key);
      }
    }

    expect((await api.get("/applications/key", { key: minted[0] })).status).toBe(200); // before: it answers
    expect(
      (await api.delete(`/tenants/self/members/${accepted.body.id}`, { key: managementKey })).status,
    ).toBe(204);
    for (const key of [memberKey, ...minted])
      expect((await api.get("/applications/key", { key })).status).toBe(401);
    const deletes = await api.get<{ data: { entity_type: string; operation: string; entity_id: string }[] }>(
      "/logs?entity_type=application_key&size=100",
      { key: managementKey },
    );
    const revoked = deletes.body.data.filter((l) => l.operation === "delete").map((l) => l.entity_id);
    expect(revoked.length).toBeGreaterThanOrEqual(40);
    expect(new Set(revoked).size).toBe(revoked.length);
  });

  it("pages members (size at most 50) and filters by user_id", async () => {
    const { api, managementKey, invite } = await setup();
    const invitation = await invite();
    const accepted = await api.post<Member>("/invitations/accept", {
      body: { code: codeFromOutbox(invitation.email).code },
    });

    const byUser = await api.get<Page<Member>>(`/tenants/self/members?user_id=${accepted.body.user.id}`, {
      key: managementKey,
    });
    const tooBig = await api.get("/tenants/self/members?size=51", { key: managementKey });
    const max = await api.get<Page<Member>>("/tenants/self/members?size=50", { key: managementKey });

    expect(byUser.body.data.map((m) => m.id)).toEqual([accepted.body.id]);
    expect(tooBig.status).toBe(400);
    expect(max.body.pagination.page_size).toBe(50);
  });

  it("refuses keys without the permission (403) and other tenants' members and invitations (404)", async () => {
    const { api, managementKey, invite } = await setup();
    const other = await setup();
    const theirInvitation = await other.invite();
    const theirMembers = await api.get<Page<Member>>("/tenants/self/members", { key: other.managementKey });
    const noRights = await api.post<{ key: string }>("/applications", {
      key: managementKey,
      body: { name: "logs", type: "management", permissions: ["log:read"] },
    });
    const key = noRights.body.key;

    const forbidden = await Promise.all([
      api.get("/tenants/self/members", { key }),
      api.delete(`/tenants/self/members/${theirMembers.body.data[0]?.id}`, { key }),
      api.post("/tenants/self/invitations", { key, body: { email: "x@example.com" } }),
      api.get("/tenants/self/invitations", { key }),
      api.post(`/tenants/self/invitations/${theirInvitation.id}/resend`, { key }),
    ]);
    const crossTenant = await Promise.all([
      api.get(`/tenants/self/invitations/${theirInvitation.id}`, { key: managementKey }),
      api.post(`/tenants/self/invitations/${theirInvitation.id}/resend`, { key: managementKey }),
      api.delete(`/tenants/self/invitations/${theirInvitation.id}`, { key: managementKey }),
      api.delete(`/tenants/self/members/${theirMembers.body.data[0]?.id}`, { key: managementKey }),
    ]);
    const logs = await api.get<{ data: { entity_type: string }[] }>("/logs?entity_type=tenant_invitation", {
      key: other.managementKey,
    });

    expect(forbidden.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(crossTenant.map((r) => r.status)).toEqual([404, 404, 404, 404]);
    expect(logs.body.data.length).toBeGreaterThan(0);
    await invite();
  });
});
