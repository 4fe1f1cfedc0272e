import { describe, expect, it } from "vitest";
import type { Client } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, tenantWithOwner } from "#test/support/tokens.ts";

/**
 * Attack: a key holding token:update but not token:delete sets a token's `expires_at` to a minute from now:
 * the token disappears for everyone, a deletion the key was never granted.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

function inSeconds(seconds: number): string {
  return new Date(svc.service.deps.clock.now().getTime() + seconds * 1000).toISOString();
}

async function setup(expiresAt?: string) {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const pub = await appKey(api, tenant.managementKey, {
    type: "public",
    permissions: ["token:create", "token:update"],
  });
  const token = await api.post<TokenBody>("/tokens", {
    key: owner,
    body: { type: "token", data: "victim's value", ...(expiresAt ? { expires_at: expiresAt } : {}) },
  });
  expect(token.status).toBe(201);
  return { api, ...tenant, owner, pub, id: token.body.id };
}

/** PATCH a token's expires_at alone (merge patch). */
const setExpiry = (api: Client, key: string, id: string, expiresAt: string | null) =>
  api.patch<TokenBody>(`/tokens/${id}`, { key, headers: mergePatch, body: { expires_at: expiresAt } });

const advanceClock = (api: Client, seconds: number) =>
  api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: seconds } });

describe("attack: deleting a token through expires_at with only token:update", () => {
  it("refuses to set an expiry on a token without one (403), and the token stays", async () => {
    const { api, owner, pub, id } = await setup();

    const res = await setExpiry(api, pub, id, inSeconds(60));
    await advanceClock(api, 120);
    const read = await api.get<TokenBody>(`/tokens/${id}`, { key: owner });

    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(read.status).toBe(200);
    expect(read.body.expires_at).toBeUndefined();
  });

  it("refuses to shorten an existing expiry (403)", async () => {
    const { api, owner, pub, id } = await setup(inSeconds(7 * 24 * 3600));

    const res = await setExpiry(api, pub, id, inSeconds(60));
    await advanceClock(api, 120);
    const read = await api.get<TokenBody>(`/tokens/${id}`, { key: owner });

    expect(res.status).toBe(403);
    expect(read.status).toBe(200);
  });

  it("still lets token:update remove or lengthen an expiry", async () => {
    const { api, pub, id } = await setup(inSeconds(3600));
    const other = await setup(inSeconds(3600));
    const later = inSeconds(7200);

    const lengthened = await setExpiry(api, pub, id, later);
    const removed = await setExpiry(other.api, other.pub, other.id, null);

    expect(lengthened.status).toBe(200);
    expect(lengthened.body.expires_at).toBe(later);
    expect(removed.status).toBe(200);
    expect(removed.body.expires_at).toBeUndefined();
  });

  it("lets a key with token:delete on the container set or shorten the expiry", async () => {
    const { api, owner, id } = await setup(inSeconds(7 * 24 * 3600));

    const res = await setExpiry(api, owner, id, inSeconds(60));
    await advanceClock(api, 120);
    const read = await api.get<TokenBody>(`/tokens/${id}`, { key: owner });

    expect(res.status).toBe(200);
    expect(read.status).toBe(404);
  });

  it("follows container rules: token:delete elsewhere does not count", async () => {
    const { api, managementKey, id } = await setup();
    const elsewhere = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/general/", transform: "mask", permissions: ["token:update"] },
        { priority: 2, container: "/pci/", transform: "mask", permissions: ["token:delete"] },
      ],
    });

    const res = await setExpiry(api, elsewhere, id, inSeconds(60));

    expect(res.status).toBe(403);
  });
});
