import { describe, expect, it } from "vitest";
import { bodyText, type client } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, tenantWithOwner, VISA } from "#test/support/tokens.ts";

/**
 * Attack: container-based access is decided by where the token is, and `containers` can be PATCHed. A key
 * that may update a token it cannot read (or a public key) moves it into a container where it, or another key,
 * reads the data in the clear, and can move it back afterwards so that nothing looks changed.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const card = { number: VISA, expiration_month: 12, expiration_year: 2030, cvc: "737" };

async function setup() {
  const { api, tenant, owner } = await tenantWithOwner(svc);
  const revealer = await appKey(api, tenant.managementKey, { type: "private", rules: revealEverything });
  const token = await api.post<TokenBody>("/tokens", { key: owner, body: { type: "card", data: card } });
  expect(token.status).toBe(201);
  expect(token.body.containers).toEqual(["/pci/high/"]);
  return { api, ...tenant, owner, revealer, id: token.body.id };
}

async function containerOf(api: ReturnType<typeof client>, key: string, id: string) {
  const res = await api.get<TokenBody>(`/tokens/${id}`, { key });
  return res.body.containers;
}

describe("attack: moving a token to a container where it can be read", () => {
  it("refuses a key that reveals only on /general/ and masks on / to move a card there (403, nothing moved)", async () => {
    const { api, managementKey, revealer, id } = await setup();
    const mover = await appKey(api, managementKey, {
      type: "private",
      rules: [
        { priority: 1, container: "/general/", transform: "reveal", permissions: ["token:read"] },
        { priority: 2, container: "/", transform: "mask", permissions: ["token:update"] },
      ],
    });

    const before = await api.get<TokenBody>(`/tokens/${id}`, { key: mover });
    const move = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: mover,
      headers: mergePatch,
      body: { containers: ["/general/"] },
    });
    const after = await api.get<TokenBody>(`/tokens/${id}`, { key: mover });

    expect(before.status).toBe(403);
    expect(move.status).toBe(403);
    expect(move.headers.get("content-type")).toContain("application/problem+json");
    expect(JSON.stringify(move.body)).not.toContain(VISA);
    expect(after.status).toBe(403);
    expect(JSON.stringify(after.body)).not.toContain(VISA);
    expect(bodyText(after.body)).not.toContain("737");
    expect(await containerOf(api, revealer, id)).toEqual(["/pci/high/"]);
  });

  it("refuses a public key that moves a victim's card where an analytics key reveals it", async () => {
    const { api, managementKey, revealer, id } = await setup();
    const pub = await appKey(api, managementKey, {
      type: "public",
      permissions: ["token:create", "token:update"],
    });
    const analytics = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/general/", transform: "reveal", permissions: ["token:read"] }],
    });

    const move = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: pub,
      headers: mergePatch,
      body: { containers: ["/general/low/"] },
    });
    const read = await api.get<TokenBody>(`/tokens/${id}`, { key: analytics });

    expect(move.status).toBe(403);
    expect(JSON.stringify(move.body)).not.toContain(VISA);
    expect(read.status).toBe(403);
    expect(JSON.stringify(read.body)).not.toContain(VISA);
    expect(await containerOf(api, revealer, id)).toEqual(["/pci/high/"]);
  });

  it("needs reveal on the source too: a key revealing only on the target cannot pull a token in", async () => {
    const { api, managementKey, revealer, id } = await setup();
    const puller = await appKey(api, managementKey, {
      type: "private",
      rules: [
        {
          priority: 1,
          container: "/general/",
          transform: "reveal",
          permissions: ["token:update", "token:read"],
        },
        { priority: 2, container: "/pci/", transform: "redact", permissions: ["token:update"] },
      ],
    });

    const move = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: puller,
      headers: mergePatch,
      body: { containers: ["/general/"] },
    });

    expect(move.status).toBe(403);
    expect(JSON.stringify(move.body)).not.toContain(VISA);
    expect(await containerOf(api, revealer, id)).toEqual(["/pci/high/"]);
  });

  it("lets a key with reveal-level token:update on both containers move the token, and back", async () => {
    const { api, revealer, id } = await setup();

    const there = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: revealer,
      headers: mergePatch,
      body: { containers: ["/general/"] },
    });
    const back = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: revealer,
      headers: mergePatch,
      body: { containers: ["/pci/high/"] },
    });

    expect(there.status).toBe(200);
    expect(there.body.containers).toEqual(["/general/"]);
    expect(back.status).toBe(200);
    expect(back.body.containers).toEqual(["/pci/high/"]);
  });

  it("does not count naming the current container as a move (masked update still allowed)", async () => {
    const { api, managementKey, id } = await setup();
    const pub = await appKey(api, managementKey, {
      type: "public",
      permissions: ["token:create", "token:update"],
    });

    const res = await api.patch<TokenBody>(`/tokens/${id}`, {
      key: pub,
      headers: mergePatch,
      body: { containers: ["/pci/high/"], metadata: { k: "v" } },
    });

    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ k: "v" });
    expect(JSON.stringify(res.body)).not.toContain(VISA);
  });
});
