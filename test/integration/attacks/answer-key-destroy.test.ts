import { describe, expect, it } from "vitest";
import { SHORT_LIVED_SEALED_SECONDS } from "#shared/domain/keys/destroy-window.ts";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { scanTable } from "#test/support/table-scan.ts";
import { appKey } from "#test/support/tokens.ts";

/**
 * Review (key custody): idempotent answers of the functions that never open token data (a new application's key,
 * a session key) are sealed under the answer key beside data version N (`answers-k<N>`). Destroying version N
 * deleted `k<N>` only: `answers-k<N>` stayed in the table for good, opening every copy of those answers (backups)
 * that the destroyed version was meant to end, and GET /tenants/self/keys showed the version destroyed.
 */
const svc = useService();

describe("attack: a destroyed key version's answer key outlives it", () => {
  it("DELETE /tenants/self/keys/{version} destroys the version's answer key with it", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const mgt = tenant.managementKey;
    const before = await api.get<{ current: number }>("/tenants/self/keys", { key: mgt });
    const version = before.body.current;
    const app = await api.post("/applications", {
      key: mgt,
      headers: { "svc-idempotency-key": "answer-key-1" },
      body: { name: "web", type: "private", permissions: ["token:read"] },
    });
    expect(app.status).toBe(201);
    // Version N seals a token (so it is counted), which is then deleted: no token needs it any more.
    const owner = await appKey(api, mgt, { type: "private", permissions: ["token:create", "token:delete"] });
    const token = await api.post<{ id: string }>("/tokens", {
      key: owner,
      body: { type: "token", data: "x" },
    });
    expect(token.status).toBe(201);
    expect((await api.delete(`/tokens/${token.body.id}`, { key: owner })).status).toBe(204);
    const answerKeyItem = async () =>
      (await scanTable(svc)).filter(
        (i) => i.PK === `TENANT#${tenant.tenantId}` && i.SK === `DATAKEY#answers-k${version}`,
      );
    expect(await answerKeyItem()).toHaveLength(1);

    expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
    const moved = await api.post("/_test/clock", {
      key: svc.rootKey,
      body: { advance_seconds: SHORT_LIVED_SEALED_SECONDS + 1 },
    });
    expect(moved.status).toBe(200);
    const destroyed = await api.delete(`/tenants/self/keys/${version}`, { key: mgt });
    expect(destroyed.status, JSON.stringify(destroyed.body)).toBe(204);
    expect(await answerKeyItem()).toEqual([]);
  });
});
