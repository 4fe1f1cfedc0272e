import { describe, expect, it } from "vitest";
import { SHORT_LIVED_SEALED_SECONDS } from "#shared/domain/keys/destroy-window.ts";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { rewrapToEnd } from "#test/support/keys.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, revealEverything, type TokenBody } from "#test/support/tokens.ts";

/**
 * Attack (issue 22 follow-up): destroy a data-key version that values other than tokens are still sealed under,
 * so they can never be opened again: proxy keys, the webhook secret (long-lived: a rewrap re-seals them) and
 * idempotent answers (short-lived: the version is destroyed only once they have outlived it).
 */
const svc = useService();

const advance = (api: Client, seconds: number) =>
  api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: seconds } });

async function setup() {
  const api = client(svc.url);
  const { managementKey: mgt } = await createTenant(api, svc.rootKey);
  const app = await api.post<{ id: string }>("/applications", {
    key: mgt,
    body: { name: "proxy app", type: "private", permissions: ["token:use"] },
  });
  const proxy = await api.post<{ id: string; key: string }>("/proxies", {
    key: mgt,
    body: { name: "p", destination_url: "https://example.com/", application: { id: app.body.id } },
  });
  expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
  const webhook = await api.get<{ secret: string }>("/tenants/self/webhook-secret", { key: mgt });
  expect(webhook.status).toBe(200);
  const current = (await api.get<{ current: number }>("/tenants/self/keys", { key: mgt })).body.current;
  /** What was sealed before the rotation still opens. */
  const stillReadable = async () => {
    const read = await api.get<{ key: string }>(`/proxies/${proxy.body.id}`, { key: mgt });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.key).toBe(proxy.body.key);
    const secret = await api.get<{ secret: string }>("/tenants/self/webhook-secret", { key: mgt });
    expect(secret.status, JSON.stringify(secret.body)).toBe(200);
    expect(secret.body.secret).toBe(webhook.body.secret);
  };
  return { api, mgt, old: current, stillReadable };
}

describe("attack: destroying a key version other sealed values still need", () => {
  it("rotate → rewrap → destroy at once: 409 until the short-lived values are outlived; then proxies and the webhook secret still open", async () => {
    const { api, mgt, old, stillReadable } = await setup();
    const tenantOwner = await appKey(api, mgt, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
      rules: revealEverything,
    });
    const first = await api.post<TokenBody>("/tokens", {
      key: tenantOwner,
      body: { type: "token", data: "kept" },
    });
    expect(first.status).toBe(201);
    const idem = { "svc-idempotency-key": "before-rotation" };
    const appBody = { name: "made once", type: "private", permissions: ["token:use"] };
    const made = await api.post<{ id: string }>("/applications", { key: mgt, headers: idem, body: appBody });
    expect(made.status).toBe(201);
    expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
    expect((await rewrapToEnd(api, mgt)).status).toBe("succeeded");

    const early = await api.delete<{ detail: string }>(`/tenants/self/keys/${old}`, { key: mgt });
    expect(early.status).toBe(409);
    expect(early.headers.get("content-type")).toContain("application/problem+json");
    expect(early.body.detail).toMatch(/can be destroyed from \d{4}-\d\d-\d\dT/);
    // The idempotent answer sealed under the old version is still replayed meanwhile.
    const replay = await api.post<{ id: string }>("/applications", {
      key: mgt,
      headers: idem,
      body: appBody,
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    expect(replay.body.id).toBe(made.body.id);
    await advance(api, SHORT_LIVED_SEALED_SECONDS - 60);
    expect((await api.delete(`/tenants/self/keys/${old}`, { key: mgt })).status).toBe(409);

    await advance(api, 120);
    expect((await api.delete(`/tenants/self/keys/${old}`, { key: mgt })).status).toBe(204);
    await stillReadable();
    const read = await api.get<TokenBody>(`/tokens/${first.body.id}`, { key: tenantOwner });
    expect(read.body.data).toBe("kept");
  });

  it("a version no token needs but a proxy key or the webhook secret does: 409 until a rewrap re-seals them", async () => {
    const { api, mgt, old, stillReadable } = await setup();
    expect((await api.post("/tenants/self/keys/rotate", { key: mgt })).status).toBe(200);
    await advance(api, SHORT_LIVED_SEALED_SECONDS + 60);

    const refused = await api.delete<{ detail: string }>(`/tenants/self/keys/${old}`, { key: mgt });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("rewrap");
    await stillReadable();

    expect((await rewrapToEnd(api, mgt)).status).toBe("succeeded");
    expect((await api.delete(`/tenants/self/keys/${old}`, { key: mgt })).status).toBe(204);
    await stillReadable();
    const logged = await api.get<{ data: { message: string }[] }>("/logs?size=100", { key: mgt });
    const messages = logged.body.data.map((entry) => entry.message).join("\n");
    expect(messages).toContain(`Proxy key re-sealed under key version ${old + 1}`);
    expect(messages).toContain(`Webhook secret re-sealed under key version ${old + 1}`);
  });
});
