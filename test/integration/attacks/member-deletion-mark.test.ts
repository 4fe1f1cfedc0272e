/**
 * A member whose deletion has begun (review s53). The deletion mark (deletion_started) stopped keys minted THROUGH a
 * member (minted_by), but not the member's own management key (its bound application's key, which carries no
 * minted_by): authentication asked memberActive only for minted_by. And the deletion could still be kept from
 * finishing: instead of minting (refused since the mark), the member revoked one of its own listed keys between each
 * listing and write, five times, and the deletion answered 409 with the mark left and the member's own key working.
 */
import { QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { actingAt, listsApplicationKeys, withOneStoreFailure } from "#test/support/dynamo.ts";
import { client, createTenant, selfKeyingApplication } from "#test/support/http.ts";
import { invitationFromOutbox, joinMember } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

describe("review s53: a member whose deletion has begun", () => {
  it("has its own management key refused once marked (a deletion that failed part-way left the mark)", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "s53 mark own key");
    const member = await joinMember(svc, api, tenant.managementKey);
    const first = await withOneStoreFailure(
      svc.service.deps.dynamo,
      (command) =>
        command instanceof TransactWriteCommand &&
        JSON.stringify(command.input).includes(`"MEMBER#${member.id}"`),
      async () =>
        (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status,
    );
    expect(first).toBeGreaterThanOrEqual(500);
    // Marked: the member's own key no longer authenticates. It was: a mint through it refused (403), but the key
    // read (200) and invited a new ADMIN (201), a member of its own making that outlives the deletion.
    const mint = await api.post("/applications", {
      key: member.management_key,
      body: { name: "after mark", type: "management", permissions: ["application:read"] },
    });
    const reads = await api.get("/applications", { key: member.management_key });
    const invites = await api.post("/tenants/self/invitations", {
      key: member.management_key,
      body: { email: "escape@example.com" },
    });
    expect({ mint: mint.status, reads: reads.status, invites: invites.status }).toEqual({
      mint: 401,
      reads: 401,
      invites: 401,
    });
    // Deleting again finishes.
    expect(
      (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status,
    ).toBe(204);
  });

  it("has the invitations it sent before the mark refused at acceptance (no member outlives it)", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "s53 mark invitation");
    const member = await joinMember(svc, api, tenant.managementKey);
    const email = `late-${Date.now()}@example.com`;
    const invited = await api.post("/tenants/self/invitations", {
      key: member.management_key,
      body: { email },
    });
    expect(invited.status).toBe(201);
    // The deletion's listing of the tenant's keys fails once, after the member and its own application are marked.
    const first = await withOneStoreFailure(
      svc.service.deps.dynamo,
      (command) => command instanceof QueryCommand && JSON.stringify(command.input).includes('"APPKEY#"'),
      async () =>
        (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status,
    );
    expect(first).toBeGreaterThanOrEqual(500);
    // It was: 201, a new ADMIN made by the invitation of a member being deleted (checked only for existing).
    const accepted = await api.post("/invitations/accept", {
      body: { code: invitationFromOutbox(svc, email).code },
    });
    expect(accepted.status).not.toBe(201);
    const members = await api.get<{ data: { user: { email: string } }[] }>("/tenants/self/members", {
      key: tenant.managementKey,
    });
    expect(members.body.data.map((m) => m.user.email)).not.toContain(email);
  });

  it("cannot keep its own deletion from finishing by revoking its own listed keys (review s52-a, by deletes)", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "s53 revoke loop");
    const member = await joinMember(svc, api, tenant.managementKey);
    const app = await api.post<{ id: string }>("/applications", {
      key: member.management_key,
      body: { name: "supply", type: "management", permissions: ["application:read"], create_key: false },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const supply: string[] = [];
    for (let i = 0; i < 6; i++) {
      const key = await api.post<{ id: string }>(`/applications/${app.body.id}/keys`, {
        key: member.management_key,
      });
      expect(key.status).toBe(201);
      supply.push(key.body.id);
    }
    // Right after each of the deletion's listings of the tenant's keys, the member (its own key still answering)
    // revokes one of the keys just listed: the deletion's conditional delete of it is refused ("changed").
    const revoked: number[] = [];
    const revokeOne = async () => {
      const keyId = supply.shift();
      if (keyId === undefined) return;
      const path = `/applications/${app.body.id}/keys/${keyId}`;
      revoked.push((await api.delete(path, { key: member.management_key })).status);
    };
    const deleted = await actingAt(
      svc.service.deps.dynamo,
      listsApplicationKeys,
      "after",
      revokeOne,
      async () =>
        (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status,
    );
    const after = (await api.get("/applications", { key: member.management_key })).status;
    // Found: { deleted: 409, after: 200 } with five revocations: the member stays, its own key working.
    expect({ deleted, after, revoked }).toEqual({ deleted: 204, after: 401, revoked: expect.any(Array) });
  });

  it("(application) a leaked key cannot keep its application from being deleted by revoking its siblings", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "s53 app revoke loop");
    const leaked = await selfKeyingApplication(api, tenant.managementKey);
    const siblings: string[] = [];
    for (let i = 0; i < 6; i++) {
      const key = await api.post<{ id: string }>(`/applications/${leaked.id}/keys`, {
        key: leaked.key,
      });
      expect(key.status).toBe(201);
      siblings.push(key.body.id);
    }
    const dynamo = svc.service.deps.dynamo;
    const send = dynamo.send.bind(dynamo);
    let busy = false;
    const spy = vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
      const out = await send(command as QueryCommand);
      const input = JSON.stringify((command as { input?: unknown }).input ?? {});
      if (
        !busy &&
        command instanceof QueryCommand &&
        input.includes(`APPKEY#${leaked.id}#`) &&
        siblings.length
      ) {
        busy = true;
        try {
          await api.delete(`/applications/${leaked.id}/keys/${siblings.shift()}`, {
            key: leaked.key,
          });
        } finally {
          busy = false;
        }
      }
      return out;
    }) as typeof dynamo.send);
    let deleted: number;
    try {
      deleted = (await api.delete(`/applications/${leaked.id}`, { key: tenant.managementKey })).status;
    } finally {
      spy.mockRestore();
    }
    // Found: 409 (five listings, one sibling revoked after each), the application and the leaked key still there.
    expect({ deleted, leaked: (await api.get("/applications", { key: leaked.key })).status }).toEqual({
      deleted: 204,
      leaked: 401,
    });
  });
});
