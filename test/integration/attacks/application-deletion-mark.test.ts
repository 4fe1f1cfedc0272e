/**
 * An application whose deletion has begun (review s54). The deletion mark (deletion_started) refused new keys of
 * the application, but a deletion that failed part-way (after the mark, before every key was revoked) left the
 * application's remaining keys, and its sessions, working until someone deleted it again.
 */

import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { withOneStoreFailure } from "#test/support/dynamo.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { revealingSession } from "#test/support/tokens.ts";

const svc = useService();

describe("an application whose deletion has begun", () => {
  it("has its keys and sessions refused once marked, and deleting it again finishes", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey, "s54 application mark");
    const app = await api.post<{ id: string; key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "checkout", type: "private", permissions: ["token:create", "token:read"] },
    });
    expect(app.status).toBe(201);
    const created = await api.post<{ id: string }>("/tokens", {
      key: app.body.key,
      body: { type: "token", data: "a value" },
    });
    expect(created.status).toBe(201);
    // A browser's session, authorized by the application being deleted (only as lasting as that application).
    const browser = await api.post<{ key: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "browser", type: "public", permissions: ["token:create"] },
    });
    const sessionKey = await revealingSession(api, browser.body.key, app.body.key);
    expect((await api.get(`/tokens/${created.body.id}`, { key: sessionKey })).status).toBe(200);
    // The deletion's listing of the application's keys fails once, after the application is marked.
    const first = await withOneStoreFailure(
      svc.service.deps.dynamo,
      (command) =>
        command instanceof QueryCommand && JSON.stringify(command.input).includes(`APPKEY#${app.body.id}#`),
      async () => (await api.delete(`/applications/${app.body.id}`, { key: tenant.managementKey })).status,
    );
    expect(first).toBeGreaterThanOrEqual(500);
    // Found: 200 (the key read on, as did a session it made), with the application half deleted.
    const read = await api.get(`/tokens/${created.body.id}`, { key: app.body.key });
    expect(read.status).toBe(401);
    const bySession = await api.get(`/tokens/${created.body.id}`, { key: sessionKey });
    expect(bySession.status).toBe(401);
    expect((await api.delete(`/applications/${app.body.id}`, { key: tenant.managementKey })).status).toBe(
      204,
    );
    expect((await api.get(`/tokens/${created.body.id}`, { key: app.body.key })).status).toBe(401);
  });
});
