import { describe, expect, it } from "vitest";
import { type Client, client, createTenant, type HttpResponse } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attack: a narrow management key (proxy:* or reactor:* only, no token access) binds a proxy or reactor to an
 * application that reveals everything, or changes what an already bound one runs (destination, require_auth,
 * formula code), and so reads full card numbers through that application's rights.
 */
const svc = useService({ allowPrivateDestinations: true });
const mergePatch = { "content-type": "application/merge-patch+json" };

const received: string[] = [];
const echo = useLocalServer((_req, res, body) => {
  received.push(body.toString());
  res.writeHead(200, { "content-type": "application/json" });
  res.end("{}");
});

const RETRIEVE_TRANSFORM = `module.exports = async (req) => ({
  body: { leaked: await req.svc.tokens.retrieve(req.args.body.id) },
  headers: {},
});`;
const RETRIEVE_FORMULA = `module.exports = async (req) => ({ raw: await req.svc.tokens.retrieve(req.args.id) });`;
const HARMLESS_FORMULA = `module.exports = async (req) => ({ raw: { ok: true } });`;

/** A tenant with an application revealing everything, a token of it, and keys of the given management permissions. */
async function setup() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const vault = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "vault", type: "private", rules: revealEverything },
  });
  expect(vault.status).toBe(201);
  const token = await api.post<TokenBody>("/tokens", {
    key: vault.body.key,
    body: { type: "card_number", data: VISA },
  });
  expect(token.status).toBe(201);
  const narrow = (...permissions: string[]) =>
    appKey(api, tenant.managementKey, { type: "management", permissions });
  return { api, ...tenant, vaultId: vault.body.id, tokenId: token.body.id, narrow };
}

function expectRefused(res: HttpResponse) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(JSON.stringify(res.body)).not.toContain(VISA);
}

const leaked = () => received.some((body) => body.includes(VISA));

async function proxyBoundToVault(api: Client, managementKey: string, vaultId: string) {
  const proxy = await api.post<{ id: string; key: string }>("/proxies", {
    key: managementKey,
    body: { name: "payments", destination_url: "https://example.com", application: { id: vaultId } },
  });
  expect(proxy.status).toBe(201);
  return proxy.body;
}

describe("attack: a narrow key acting through a proxy or reactor bound to a wider application", () => {
  it("A: refuses a proxy:create key binding a proxy (or a retrieving transform) to a revealing application (403)", async () => {
    const { api, vaultId, tokenId, narrow } = await setup();
    const key = await narrow("proxy:create", "proxy:read", "application:read");
    const apps = await api.get<{ data: { id: string }[] }>("/applications", { key });
    expect(apps.body.data.map((a) => a.id)).toContain(vaultId);

    const detokenizing = await api.post<{ key: string }>("/proxies", {
      key,
      body: { name: "x", destination_url: echo.url, require_auth: false, application: { id: vaultId } },
    });
    const transform = await api.post<{ key: string }>("/proxies", {
      key,
      body: {
        name: "y",
        destination_url: echo.url,
        require_auth: false,
        request_transform: { code: RETRIEVE_TRANSFORM },
        application: { id: vaultId },
      },
    });
    for (const proxy of [detokenizing, transform]) {
      expectRefused(proxy);
      if (proxy.body.key)
        await api.post("/proxy", {
          headers: { "svc-proxy-key": proxy.body.key },
          body: { n: `{{ token: ${tokenId} }}`, id: tokenId },
        });
    }
    const unbound = await api.post("/proxies", {
      key,
      body: { name: "z", destination_url: echo.url, require_auth: false },
    });

    expect(leaked()).toBe(false);
    expectRefused(unbound);
  });

  it("D: refuses a proxy:update key redirecting an unbound require_auth proxy to itself (403), so callers' data stays", async () => {
    const { api, managementKey, tokenId, narrow } = await setup();
    const vaultKey = await appKey(api, managementKey, { type: "private", rules: revealEverything });
    const created = await api.post<{ id: string; key: string }>("/proxies", {
      key: managementKey,
      body: { name: "unbound", destination_url: "https://example.com", require_auth: true },
    });
    expect(created.status).toBe(201);
    const key = await narrow("proxy:update", "proxy:read");

    const patched = await api.patch(`/proxies/${created.body.id}`, {
      key,
      headers: mergePatch,
      body: { destination_url: echo.url },
    });
    const transformed = await api.patch(`/proxies/${created.body.id}`, {
      key,
      headers: mergePatch,
      body: { response_transform: { code: "module.exports = async (res) => res;" } },
    });
    const open = await api.patch(`/proxies/${created.body.id}`, {
      key,
      headers: mergePatch,
      body: { require_auth: false },
    });
    const renamed = await api.patch(`/proxies/${created.body.id}`, {
      key,
      headers: mergePatch,
      body: { name: "renamed" },
    });
    if (patched.status === 204)
      // a legitimate caller of the proxy, whose card number would now go to the attacker
      await api.post("/proxy", {
        key: vaultKey,
        headers: { "svc-proxy-key": created.body.key },
        body: { n: `{{ token: ${tokenId} }}` },
      });

    for (const res of [patched, transformed, open]) expectRefused(res);
    expect(renamed.status).toBe(204);
    expect(leaked()).toBe(false);
  });

  it("E: shows a proxy's key only to a member's own key, not to a proxy:read key (no anonymous access)", async () => {
    const { api, managementKey, vaultId, narrow } = await setup();
    const created = await api.post<{ id: string; key: string }>("/proxies", {
      key: managementKey,
      body: { name: "open", destination_url: echo.url, require_auth: false, application: { id: vaultId } },
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toBeTruthy();
    const key = await narrow("proxy:read");

    const list = await api.get<{ data: Record<string, unknown>[] }>("/proxies", { key });
    const one = await api.get<Record<string, unknown>>(`/proxies/${created.body.id}`, { key });
    const byMember = await api.get<{ key?: string }>(`/proxies/${created.body.id}`, { key: managementKey });

    expect(list.status).toBe(200);
    expect(one.status).toBe(200);
    expect(list.body.data.map((p) => p.id)).toContain(created.body.id);
    for (const view of [...list.body.data, one.body]) expect(view).not.toHaveProperty("key");
    expect(JSON.stringify([list.body, one.body])).not.toContain(created.body.key);
    expect(byMember.body.key).toBe(created.body.key);
  });

  it("B: refuses a proxy:update key redirecting a bound proxy or dropping its require_auth (403)", async () => {
    const { api, managementKey, vaultId, tokenId, narrow } = await setup();
    const proxy = await proxyBoundToVault(api, managementKey, vaultId);
    const key = await narrow("proxy:update");

    const patched = await api.patch(`/proxies/${proxy.id}`, {
      key,
      headers: mergePatch,
      body: { destination_url: echo.url, require_auth: false },
    });
    const replaced = await api.put(`/proxies/${proxy.id}`, {
      key,
      body: {
        name: "payments",
        destination_url: echo.url,
        require_auth: false,
        application: { id: vaultId },
      },
    });
    const unbound = await api.put(`/proxies/${proxy.id}`, {
      key,
      body: { name: "payments", destination_url: echo.url, request_transform: { code: RETRIEVE_TRANSFORM } },
    });
    const anonymous = await api.post("/proxy", {
      headers: { "svc-proxy-key": proxy.key },
      body: { n: `{{ token: ${tokenId} }}` },
    });

    for (const res of [patched, replaced, unbound]) expectRefused(res);
    expect(anonymous.status).toBe(401);
    expect(leaked()).toBe(false);
  });

  it("C: refuses a reactor:create key binding a retrieving formula's reactor to a revealing application (403)", async () => {
    const { api, managementKey, vaultId, tokenId, narrow } = await setup();
    const key = await narrow("reactor:create");
    const user = await appKey(api, managementKey, { type: "private", permissions: ["token:use"] });

    const formulaBody = {
      name: "steal",
      code: RETRIEVE_FORMULA,
      request_parameters: [{ name: "id", type: "string" }],
    };
    const ownFormula = await api.post<{ id: string }>("/reactor-formulas", { key, body: formulaBody });
    // Formulas are made by members (data-routing-fields.test.ts); the narrow key then tries to bind one.
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: formulaBody,
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key,
      body: {
        name: "steal",
        formula: { id: formula.body.id },
        configuration: {},
        application: { id: vaultId },
      },
    });
    const reacted = reactor.body.id
      ? await api.post(`/reactors/${reactor.body.id}/react`, { key: user, body: { args: { id: tokenId } } })
      : undefined;

    expectRefused(ownFormula);
    expect(formula.status).toBe(201);
    expectRefused(reactor);
    expect(JSON.stringify(reacted?.body ?? {})).not.toContain(VISA);
  });

  it("refuses a reactor:update key swapping a bound reactor's formula code or changing the reactor (403)", async () => {
    const { api, managementKey, vaultId, tokenId, narrow } = await setup();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: { name: "ok", code: HARMLESS_FORMULA, request_parameters: [{ name: "id", type: "string" }] },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "ok", formula: { id: formula.body.id }, configuration: {}, application: { id: vaultId } },
    });
    expect(reactor.status).toBe(201);
    const key = await narrow("reactor:update");
    const user = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/unrelated/", transform: "redact", permissions: ["token:use"] }],
    });

    const swapped = await api.put(`/reactor-formulas/${formula.body.id}`, {
      key,
      body: { name: "ok", code: RETRIEVE_FORMULA, request_parameters: [{ name: "id", type: "string" }] },
    });
    const renamed = await api.patch(`/reactors/${reactor.body.id}`, {
      key,
      headers: mergePatch,
      body: { name: "renamed" },
    });
    const reacted = await api.post(`/reactors/${reactor.body.id}/react`, {
      key: user,
      body: { args: { id: tokenId } },
    });
    const ownerSwap = await api.put(`/reactor-formulas/${formula.body.id}`, {
      key: managementKey,
      body: { name: "ok", code: HARMLESS_FORMULA, request_parameters: [{ name: "id", type: "string" }] },
    });

    expectRefused(swapped);
    expectRefused(renamed);
    expect(reacted.status).toBe(200);
    expect(JSON.stringify(reacted.body)).not.toContain(VISA);
    expect(ownerSwap.status).toBe(200);
  });

  it("stops a removed member's proxy acting as the application it was bound to (nothing is detokenized)", async () => {
    const { api, managementKey, vaultId, tokenId } = await setup();
    const email = `leaver${Date.now()}@example.com`;
    await api.post("/tenants/self/invitations", { key: managementKey, body: { email } });
    const { code } = invitationFromOutbox(svc, email);
    const member = await api.post<{ id: string; management_key: string }>("/invitations/accept", {
      body: { code },
    });
    expect(member.status).toBe(201);
    const proxy = await api.post<{ key: string }>("/proxies", {
      key: member.body.management_key,
      body: { name: "exfil", destination_url: echo.url, require_auth: false, application: { id: vaultId } },
    });
    expect(proxy.status).toBe(201);
    const call = async () => {
      const before = received.length;
      await api.post("/proxy", {
        headers: { "svc-proxy-key": proxy.body.key },
        body: { n: `{{ token: ${tokenId} }}` },
      });
      return received.slice(before).some((body) => body.includes(VISA));
    };

    const whileMember = await call();
    const removed = await api.delete(`/tenants/self/members/${member.body.id}`, { key: managementKey });
    const afterRemoval = await call();

    expect(whileMember).toBe(true);
    expect(removed.status).toBe(204);
    expect(afterRemoval).toBe(false);
  });
});
