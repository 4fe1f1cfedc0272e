/**
 * Review of round 7: a proxy's key is shown to members' own keys, and a member removed from the tenant kept every
 * proxy key they had read (their own keys end; a key they read does not), with no way to change it: an open
 * proxy's key then still detokenized as its application. POST /proxies/{id}/key/rotate gives the proxy a new key;
 * the old one stops at once.
 */
import { describe, expect, it } from "vitest";
import { useLocalServer } from "#test/support/local-server.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { createOpenProxy } from "#test/support/proxies.ts";
import { useService } from "#test/support/service.ts";

const svc = useService({ allowPrivateDestinations: true });
const destination = useLocalServer((_req, res, body) => {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ got: body.length }));
});

const invoke = (key: string) =>
  fetch(`${svc.url}/proxy`, {
    method: "POST",
    headers: { "svc-proxy-key": key, "content-type": "application/json" },
    body: JSON.stringify({ a: 1 }),
  });

describe("attack: a proxy key read by a member since removed", () => {
  it("is replaced by a rotation (a member's own key only); the old key stops at once", async () => {
    const {
      api,
      managementKey: owner,
      key: first,
    } = await createOpenProxy(svc.url, svc.rootKey, destination.url);
    const listed = await api.get<{ data: { id: string; key: string }[] }>("/proxies", { key: owner });
    const proxyId = listed.body.data[0]?.id as string;
    // An ADMIN joins, reads the proxy's key, and is removed.
    const email = `admin-${Date.now()}@example.com`;
    expect((await api.post("/tenants/self/invitations", { key: owner, body: { email } })).status).toBe(201);
    const member = await api.post<{ id: string; management_key: string }>("/invitations/accept", {
      body: { code: invitationFromOutbox(svc, email).code },
    });
    expect(member.status).toBe(201);
    const seen = await api.get<{ key: string }>(`/proxies/${proxyId}`, { key: member.body.management_key });
    expect(seen.body.key).toBe(first);
    expect((await api.delete(`/tenants/self/members/${member.body.id}`, { key: owner })).status).toBe(204);
    expect((await invoke(first)).status).toBe(200); // what they read still works: hence the rotation

    // A key that is not a member's own is never shown the proxy's key, so it may not make one either.
    const app = await api.post<{ key: string }>("/applications", {
      key: owner,
      body: { name: "ops", type: "management", permissions: ["proxy:update", "proxy:read"] },
    });
    const byApp = await api.post(`/proxies/${proxyId}/key/rotate`, { key: app.body.key });
    expect(byApp.status).toBe(403);

    const rotated = await api.post<{ id: string; key: string }>(`/proxies/${proxyId}/key/rotate`, {
      key: owner,
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.id).toBe(proxyId);
    expect(rotated.body.key).toMatch(/^key_/);
    expect(rotated.body.key).not.toBe(first);
    expect((await invoke(first)).status).toBe(401);
    expect((await invoke(rotated.body.key)).status).toBe(200);
    // Retried with its idempotency key: the same new key, rotated once.
    const once = { key: owner, headers: { "svc-idempotency-key": `rotate-${proxyId}` } };
    const retried = [
      await api.post<{ key: string }>(`/proxies/${proxyId}/key/rotate`, once),
      await api.post<{ key: string }>(`/proxies/${proxyId}/key/rotate`, once),
    ];
    expect(retried.map((r) => r.status)).toEqual([200, 200]);
    expect(retried[1]?.body.key).toBe(retried[0]?.body.key);
    expect((await invoke(rotated.body.key)).status).toBe(401);
    expect((await invoke(retried[0]?.body.key as string)).status).toBe(200);
    // Another tenant's owner, and a member-less key of this tenant without proxy:update.
    const other = await createOpenProxy(svc.url, svc.rootKey, destination.url);
    expect((await api.post(`/proxies/${proxyId}/key/rotate`, { key: other.managementKey })).status).toBe(404);
    const reader = await api.post<{ key: string }>("/applications", {
      key: owner,
      body: { name: "ro", type: "management", permissions: ["proxy:read"] },
    });
    expect((await api.post(`/proxies/${proxyId}/key/rotate`, { key: reader.body.key })).status).toBe(403);
    expect((await invoke(retried[0]?.body.key as string)).status).toBe(200);
    const logs = await api.get<{ data: { message: string }[] }>(`/logs?entity_id=${proxyId}`, { key: owner });
    expect(logs.body.data.map((entry) => entry.message)).toContain("Proxy key rotated");
    expect(JSON.stringify(logs.body)).not.toContain(rotated.body.key);
    expect(logs.body.data.filter((entry) => entry.message === "Proxy key rotated")).toHaveLength(2);
  });
});
