/**
 * Review of stop 50 (a50), on the revocation fix (e6540bd): a member's (or application's) deletion lists its keys, then writes;
 * untilRevoked lists again only when a listed key was revoked meanwhile. A key ADDED meanwhile (the member, about
 * to be removed, mints one more) is never revoked: the member is gone, its new key stays listed on the
 * application, with a `create` entry and no `delete` (docs: "a holder is never gone while a key of its stays").
 */
import { QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { actingAt, listsApplicationKeys, withOneStoreFailure } from "#test/support/dynamo.ts";
import { client, createTenant, selfKeyingApplication } from "#test/support/http.ts";
import { joinMember } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";

const svc = useService();

type Minted = { status: number; body: { id?: string; key?: string } };

/**
 * Runs `deletion`; just before its write transaction, `mint` adds a key (the race: after the deletion
 * listed the keys it revokes). Answers the deletion's status and the mint's answer.
 */
async function mintingDuring(
  deletion: () => Promise<{ status: number }>,
  mint: () => Promise<Minted>,
  /** What the deletion's write names (its holder's item): no other write of the service sets the race off. */
  holder: string,
) {
  const dynamo = svc.service.deps.dynamo;
  const send = dynamo.send.bind(dynamo);
  let late: Minted | undefined;
  const spy = vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
    if (!late && command instanceof TransactWriteCommand && JSON.stringify(command.input).includes(holder)) {
      late = { status: 0, body: {} };
      late = await mint();
    }
    return send(command as TransactWriteCommand);
  }) as typeof dynamo.send);
  try {
    const deleted = (await deletion()).status;
    return { deleted, late };
  } finally {
    spy.mockRestore();
  }
}

describe("attack: a key minted while its member is being deleted", () => {
  it("is refused once the deletion has begun, and the deletion revokes what the member held", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Late key");
    const member = await joinMember(svc, api, tenant.managementKey);
    const app = await api.post<{ id: string }>("/applications", {
      key: member.management_key,
      body: { name: "ci", type: "management", permissions: ["application:read"] },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(201);

    // Between the deletion's listing of the member's keys and its write, the member mints one more. Before the
    // deletion marked the member first (review s52-a), this key was written; before fa0dae1 it also stayed listed.
    const { deleted, late } = await mintingDuring(
      () => api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey }),
      () => api.post(`/applications/${app.body.id}/keys`, { key: member.management_key }),
      `"MEMBER#${member.id}"`,
    );
    // 401: the member's own key stops at the mark (review s53); a principal still cached elsewhere gets 403 from the
    // mint's own condition on the mark.
    expect({ deleted, late: late?.status }).toEqual({ deleted: 204, late: 401 });
    const listed = await api.get<{ id: string }[]>(`/applications/${app.body.id}/keys`, {
      key: tenant.managementKey,
    });
    expect(listed.body).toEqual([]);
  });

  it("nor is an application created through it with its key (POST /applications, review s52-a)", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Late app key via create");
    const member = await joinMember(svc, api, tenant.managementKey);
    // Before: written, its key minted by the member; the deletion had listed the member's keys before, so that key
    // stayed listed, logged created and never revoked.
    const { deleted, late } = await mintingDuring(
      () => api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey }),
      () =>
        api.post("/applications", {
          key: member.management_key,
          body: { name: "late", type: "management", permissions: ["application:read"] },
        }),
      `"MEMBER#${member.id}"`,
    );
    // 401: the member's own key stops at the mark (review s53); a principal still cached elsewhere gets 403 from the
    // mint's own condition on the mark.
    expect({ deleted, late: late?.status }).toEqual({ deleted: 204, late: 401 });
    const names = await api.get<{ data: { name: string }[] }>("/applications?size=100", {
      key: tenant.managementKey,
    });
    expect(names.body.data.map((app) => app.name)).not.toContain("late");
  });

  it("cannot keep its own deletion from finishing by minting as fast as it is listed (review s52-a)", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Minting loop");
    const member = await joinMember(svc, api, tenant.managementKey);
    const apps = await Promise.all(
      [1, 2, 3].map((n) =>
        api.post<{ id: string }>("/applications", {
          key: member.management_key,
          body: { name: `loop ${n}`, type: "management", permissions: ["application:read"] },
        }),
      ),
    );
    // At every listing of the tenant's keys, the member (its key still answering) mints one more.
    const mints: number[] = [];
    const mintOne = async () => {
      if (mints.length >= 20) return;
      const app = apps[mints.length % apps.length]?.body.id;
      mints.push((await api.post(`/applications/${app}/keys`, { key: member.management_key })).status);
    };
    const deleted = await actingAt(
      svc.service.deps.dynamo,
      listsApplicationKeys,
      "before",
      mintOne,
      async () =>
        (await api.delete(`/tenants/self/members/${member.id}`, { key: tenant.managementKey })).status,
    );
    // Before: every mint moved the member's count, the deletion listed again five times and answered 409; the
    // member stayed, its keys working.
    expect({ deleted, minted: mints.filter((status) => status === 201).length }).toEqual({
      deleted: 204,
      minted: 0,
    });
    expect((await api.get("/applications", { key: member.management_key })).status).toBe(401);
  });

  it("a key added while its application is being deleted is refused, and nothing of it stays", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Late app key");
    const app = await api.post<{ id: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "ci", type: "management", permissions: ["application:read"] },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const { deleted, late } = await mintingDuring(
      () => api.delete(`/applications/${app.body.id}`, { key: tenant.managementKey }),
      () => api.post(`/applications/${app.body.id}/keys`, { key: tenant.managementKey }),
      `"APP#${app.body.id}"`,
    );
    // Stop 50's review: this key was written, logged created and never revoked; since fa0dae1 it was revoked by a
    // second listing; since the deletion marks the application first (review s52-a), it is refused.
    expect({ deleted, late: late?.status }).toEqual({ deleted: 204, late: 404 });
    expect((await api.get(`/applications/${app.body.id}/keys`, { key: tenant.managementKey })).status).toBe(
      404,
    );
  });

  it("cannot keep its application from being deleted by adding keys to it in a loop (review s52-a)", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "App key loop");
    // A leaked key whose application may add keys (application:update): the owner deletes that application.
    const leaked = await selfKeyingApplication(api, tenant.managementKey);
    const dynamo = svc.service.deps.dynamo;
    const send = dynamo.send.bind(dynamo);
    const adds: number[] = [];
    let adding = false;
    const spy = vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
      const input = JSON.stringify((command as { input?: unknown }).input ?? {});
      // Not from within an addition (its own queries of the keys): only the deletion's listings set one off.
      if (
        !adding &&
        command instanceof QueryCommand &&
        input.includes(`APPKEY#${leaked.id}`) &&
        adds.length < 10
      ) {
        adding = true;
        try {
          adds.push((await api.post(`/applications/${leaked.id}/keys`, { key: leaked.key })).status);
        } finally {
          adding = false;
        }
      }
      return send(command as QueryCommand);
    }) as typeof dynamo.send);
    let deleted: number;
    try {
      deleted = (await api.delete(`/applications/${leaked.id}`, { key: tenant.managementKey })).status;
    } finally {
      spy.mockRestore();
    }
    // Before: each added key moved the application's count, the deletion listed again five times and answered
    // 409; the application and its leaked key stayed.
    expect({ deleted, added: adds.filter((status) => status === 201).length }).toEqual({
      deleted: 204,
      added: 0,
    });
    expect((await api.get("/applications", { key: leaked.key })).status).toBe(401);
  });

  it("is marked only by a deletion its caller may make: another tenant's key (404) or one without application:delete (403) leaves it usable", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Mark owner");
    const other = await createTenant(api, svc.rootKey, "Mark stranger");
    const app = await api.post<{ id: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "kept", type: "management", permissions: ["application:read"] },
    });
    const weak = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "weak", type: "management", permissions: ["application:read", "application:update"] },
    });
    const stranger = await api.delete(`/applications/${app.body.id}`, { key: other.managementKey });
    const unpermitted = await api.delete(`/applications/${app.body.id}`, { key: weak.body.key });
    expect({ stranger: stranger.status, unpermitted: unpermitted.status }).toEqual({
      stranger: 404,
      unpermitted: 403,
    });
    // Not marked: a key is still added to it, and its answer carries no mark.
    expect((await api.post(`/applications/${app.body.id}/keys`, { key: tenant.managementKey })).status).toBe(
      201,
    );
    const read = await api.get<Record<string, unknown>>(`/applications/${app.body.id}`, {
      key: tenant.managementKey,
    });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("deletion_started");
  });

  it("stays marked after a deletion that failed part-way: keys refused, the mark never shown, deleting again finishes", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "Mark left");
    const app = await api.post<{ id: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "half", type: "management", permissions: ["application:read"] },
    });
    const first = await withOneStoreFailure(
      svc.service.deps.dynamo,
      (command) =>
        command instanceof TransactWriteCommand &&
        JSON.stringify(command.input).includes(`"APP#${app.body.id}"`),
      async () => (await api.delete(`/applications/${app.body.id}`, { key: tenant.managementKey })).status,
    );
    expect(first).toBeGreaterThanOrEqual(500);
    const read = await api.get<Record<string, unknown>>(`/applications/${app.body.id}`, {
      key: tenant.managementKey,
    });
    const listed = await api.get<{ data: Record<string, unknown>[] }>("/applications?size=100", {
      key: tenant.managementKey,
    });
    expect(read.status).toBe(200);
    expect(JSON.stringify([read.body, listed.body])).not.toContain("deletion_started");
    expect((await api.post(`/applications/${app.body.id}/keys`, { key: tenant.managementKey })).status).toBe(
      404,
    );
    expect((await api.delete(`/applications/${app.body.id}`, { key: tenant.managementKey })).status).toBe(
      204,
    );
  });
});
