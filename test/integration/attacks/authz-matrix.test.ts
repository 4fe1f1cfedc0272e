/**
 * The authorization matrix: every route of the table (routeList), addressed at real resources of tenant A, called
 * with each credential that must not reach them: no or malformed key, revoked and deleted keys, tenant A's keys
 * lacking the permission (public, session), and tenant B's keys holding every permission. Refusals are
 * problem+json, carry nothing of A, change nothing of A, and B meets A's ids exactly as ids that exist nowhere.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routeList } from "#shared/api/index.ts";
import { type Client, client, createTenant, type HttpResponse } from "#test/support/http.ts";
import { invitationFromOutbox } from "#test/support/outbox.ts";
import { useService } from "#test/support/service.ts";
import { ALL_TOKEN_PERMISSIONS, appKey, application, revealEverything } from "#test/support/tokens.ts";

const svc = useService({ allowPrivateDestinations: true });
type Route = (typeof routeList)[number];
type Ids = Record<string, string>;
type Answer = Record<
  "id" | "key" | "nonce" | "fingerprint" | "asyncReactorRequestId" | "session_key",
  string
>;
const SECRET = `secret-${randomUUID()}`;
const CODE = "module.exports = async (req) => ({ raw: { args: req.args } });";
const URL = "https://example.com";

/** Which of A's ids a path parameter names: by the path segment before it (`{version}` is a number, 1). */
const SEGMENT_IDS = `applications:app keys:keyId tokens:token transactions:tx members:member invitations:invitation
  proxies:proxy reactor-formulas:formula reactors:reactor results:result rewrap:rewrap`;
const ID_OF = new Map(SEGMENT_IDS.split(/\s+/).map((pair) => pair.split(":") as [string, string]));
/** Query filters naming A's resources, and a realistic body per route that takes one. */
const QUERY: Record<string, (i: Ids) => string> = {
  listLogs: (i) => `?entity_id=${i.token}`,
  listTokens: (i) => `?id=${i.token}`,
  listTokensV2: (i) => `?fingerprint=${i.fp}`,
  listProxies: (i) => `?id=${i.proxy}`,
  listReactors: (i) => `?id=${i.reactor}`,
};
const BODY: Record<string, (i: Ids) => unknown> = {
  advanceTestClock: () => ({ advance_seconds: 0 }),
  createTenant: () => ({ name: "x" }),
  setSelfTenantKmsKey: () => ({ key_arn: "arn:aws:kms:us-east-1:123456789012:key/k" }),
  createApplication: () => ({ name: "n", type: "private", permissions: ["token:read"] }),
  updateApplication: () => ({ name: "n", permissions: ["token:read"] }),
  createToken: () => ({ type: "token", data: "b" }),
  tokenize: () => ({ type: "token", data: "b" }),
  patchToken: () => ({ metadata: { k: "v" } }),
  detokenize: (i) => ({ v: `{{ ${i.token} }}` }),
  searchTokens: (i) => ({ query: `fingerprint:${i.fp}` }),
  authorizeSession: (i) => ({ nonce: i.nonce, permissions: ["token:read"] }),
  createInvitation: () => ({ email: "invitee@example.com" }),
  createProxy: (i) => ({ name: "p", destination_url: URL, application: { id: i.app } }),
  replaceProxy: () => ({ name: "p", destination_url: URL }),
  patchProxy: () => ({ name: "p2" }),
  createFormula: () => ({ name: "f", code: CODE }),
  replaceFormula: () => ({ name: "f", code: CODE }),
  createReactor: (i) => ({ name: "r", formula: { id: i.formula }, application: { id: i.app } }),
  replaceReactor: () => ({ name: "r", configuration: {} }),
  patchReactor: () => ({ name: "r2" }),
  react: () => ({ args: {} }),
  reactAsync: () => ({ args: {} }),
};
const keyRoutes = routeList.filter((r) => r.auth !== "none");
const isToken = (r: Route) => (r.permissions ?? []).some((p) => p.startsWith("token:"));

function request(r: Route, ids: Ids) {
  const path = r.path.replace(/([\w-]+)\/\{(\w+)\}/g, (_, segment: string, param: string) =>
    param === "version" ? `${segment}/1` : `${segment}/${ids[ID_OF.get(segment) ?? "unknown"]}`,
  );
  return { path: path + (QUERY[r.operationId]?.(ids) ?? ""), body: BODY[r.operationId]?.(ids) };
}
const send = (api: Client, r: Route, ids: Ids, key?: string) => {
  const { path, body } = request(r, ids);
  const headers: Record<string, string> = r.contentType ? { "content-type": r.contentType } : {};
  return api.call(r.method, path, { ...(key ? { key } : {}), body, headers });
};

let api: Client;
type Tenant = Awaited<ReturnType<typeof createTenant>>;
let A: Tenant & { owner: string; proxyKey: string; ids: Ids; text: string[] };
let B: { mgmt: string; pvt: string; proxyKey: string; reactor: string };
const seen: string[] = [];
let destination: ReturnType<typeof createServer>;

/** Tenant A's state, as its owner reads it. */
const stateOfA = () => {
  const { token, app, proxy, reactor, formula } = A.ids;
  const paths = `/tokens/${token} /applications?size=100 /applications/${app}/keys /proxies/${proxy}
    /reactors/${reactor} /reactor-formulas/${formula} /tenants/self/members /tenants/self/invitations
    /tenants/self /tenants/self/keys /tenants/self/webhook-secret`;
  return Promise.all(
    paths.split(/\s+/).map(async (p) => {
      const res = await api.get(p, { key: p.startsWith("/tokens") ? A.owner : A.managementKey });
      return [p, res.status, res.body];
    }),
  );
};

/** A refusal: the status, problem+json, and nothing of tenant A but what the request itself named. */
function refused(res: HttpResponse, statuses: number[], what: string, asked = "") {
  expect(statuses, `${what}: ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
  expect(res.headers.get("content-type"), what).toContain("application/problem+json");
  for (const secret of A.text.filter((t) => !asked.includes(t)))
    expect(JSON.stringify(res.body), `${what} discloses ${secret}`).not.toContain(secret);
}

beforeAll(async () => {
  destination = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => seen.push(chunk.toString()));
    req.pipe(res);
  });
  await new Promise<void>((r) => destination.listen(0, "127.0.0.1", r));
  const echo = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
  api = client(svc.url);
  const post = async (path: string, key: string | undefined, body?: unknown) =>
    (await api.post<Answer>(path, { ...(key ? { key } : {}), body })).body;
  const a = await createTenant(api, svc.rootKey, "Tenant A");
  const m = a.managementKey;
  const owner = await application(api, m, { type: "private", rules: revealEverything });
  const data = { type: "token", data: SECRET, search_indexes: ["{{ data }}"] };
  const made = await post("/tokens", owner.key, data);
  const token = (await api.get<Answer>(`/tokens/${made.id}`, { key: owner.key })).body;
  const keys = await api.get<Answer[]>(`/applications/${owner.id}/keys`, { key: m });
  const proxy = await post("/proxies", m, {
    name: "a",
    destination_url: echo,
    application: { id: owner.id },
  });
  const formula = await post("/reactor-formulas", m, { name: "f", code: CODE });
  const reactorBody = { name: "r", formula: { id: formula.id }, application: { id: owner.id } };
  const reactor = await post("/reactors", m, reactorBody);
  const result = await post(`/reactors/${reactor.id}/react-async`, owner.key, { args: {} });
  await post("/tenants/self/invitations", m, { email: "member@example.com" });
  const member = await post("/invitations/accept", undefined, {
    code: invitationFromOutbox(svc, "member@example.com").code,
  });
  const invitation = await post("/tenants/self/invitations", m, { email: "pending@example.com" });
  const pub = await appKey(api, m, { type: "public", permissions: ["token:create"] });
  const ids: Ids = {
    token: token.id,
    fp: token.fingerprint,
    app: owner.id,
    keyId: String(keys.body[0]?.id),
    proxy: proxy.id,
    formula: formula.id,
    reactor: reactor.id,
    result: result.asyncReactorRequestId,
    member: member.id,
    invitation: invitation.id,
    rewrap: (await post("/tenants/self/keys/rewrap", m)).id,
    tx: (await post("/transactions", owner.key)).id,
    nonce: (await post("/sessions", pub)).nonce,
  };
  for (const [name, value] of Object.entries(ids)) expect(String(value), name).toMatch(/^[\w-]{16,}$/);
  A = { ...a, owner: owner.key, proxyKey: proxy.key, ids, text: [SECRET, a.tenantId, ...Object.values(ids)] };
  const b = await createTenant(api, svc.rootKey, "Tenant B");
  const bm = b.managementKey;
  const bApp = await application(api, bm, { type: "private", permissions: ALL_TOKEN_PERMISSIONS });
  const app = { id: bApp.id };
  const bProxy = await post("/proxies", bm, {
    name: "b",
    destination_url: echo,
    require_auth: false,
    application: app,
  });
  const bReactor = await post("/reactors", bm, { name: "b", code: CODE, application: app });
  B = { mgmt: bm, pvt: bApp.key, proxyKey: bProxy.key, reactor: bReactor.id };
}, 120_000);

afterAll(() => destination?.close());

describe("authorization matrix over routeList", () => {
  it("knows which of tenant A's resources each path parameter names", () => {
    const paths = keyRoutes.map((r) => request(r, A.ids).path);
    expect(paths.filter((p) => /[{}]|undefined/.test(p))).toEqual([]);
  });

  it("refuses no key and malformed keys (401) on every key and root route", async () => {
    for (const r of keyRoutes)
      for (const key of [undefined, "key_pvt_not-a-key", "x".repeat(600)])
        refused(await send(api, r, A.ids, key), [401], `${r.operationId} key=${key?.slice(0, 12)}`);
  });

  it("refuses tenant A's keys lacking the route's permission, its public key and its session key (403)", async () => {
    const tokenOnly = await appKey(api, A.managementKey, { type: "private", permissions: ["token:read"] });
    const appReader = await appKey(api, A.managementKey, {
      type: "management",
      permissions: ["application:read"],
    });
    const pub = await appKey(api, A.managementKey, { type: "public", permissions: ["token:create"] });
    const session = await api.post<Answer>("/sessions", { key: pub });
    const authorize = { nonce: session.body.nonce, permissions: ["token:read"] };
    expect((await api.post("/sessions/authorize", { key: A.owner, body: authorize })).status).toBe(200);
    const before = await stateOfA();
    for (const r of keyRoutes) {
      const perms = r.permissions ?? [];
      const holds = (granted: string) => perms.length > 0 && perms.every((p) => p === granted);
      const narrow: Ids = {};
      if (perms.length > 0) narrow.lacking = isToken(r) ? appReader : tokenOnly;
      if (perms.length > 0 && !holds("token:create")) narrow.public = pub;
      if (!r.allowSessions || !holds("token:read")) narrow.session = String(session.body.session_key);
      for (const [kind, key] of Object.entries(narrow))
        refused(
          await send(api, r, A.ids, key),
          r.auth === "root" ? [401] : [403],
          `${r.operationId} by ${kind}`,
        );
    }
    expect(await stateOfA()).toEqual(before);
  });

  it("refuses revoked keys, deleted applications' keys and a deleted tenant's keys (401) everywhere", async () => {
    const { managementAppId, managementKey } = A;
    const extra = await api.post<Answer>(`/applications/${managementAppId}/keys`, { key: managementKey });
    const gone = await application(api, managementKey, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
    });
    const c = await createTenant(api, svc.rootKey, "Deleted");
    const cToken = await appKey(api, c.managementKey, {
      type: "private",
      permissions: ALL_TOKEN_PERMISSIONS,
    });
    const revoke = `/applications/${managementAppId}/keys/${extra.body.id}`;
    expect((await api.delete(revoke, { key: managementKey })).status).toBe(204);
    expect((await api.delete(`/applications/${gone.id}`, { key: managementKey })).status).toBe(204);
    expect((await api.delete("/tenants/self", { key: c.managementKey })).status).toBe(200);
    const before = await stateOfA();
    for (const r of keyRoutes)
      for (const key of isToken(r) ? [gone.key, cToken] : [String(extra.body.key), c.managementKey])
        refused(await send(api, r, A.ids, key), [401], `${r.operationId} by a revoked or deleted key`);
    expect(await stateOfA()).toEqual(before);
  });

  it("never lists, searches, detokenizes or proxies another tenant's items", async () => {
    const lists = `/tokens /v2/tokens /applications /proxies /reactors /reactor-formulas /logs /logs/entity-types
      /tenants/self/members /tenants/self/invitations /tenants/self/keys`;
    for (const path of lists.split(/\s+/)) {
      const res = await api.get(path, { key: path.includes("tokens") ? B.pvt : B.mgmt });
      expect(res.status, path).toBe(200);
      for (const secret of A.text)
        expect(JSON.stringify(res.body), `${path} lists ${secret}`).not.toContain(secret);
    }
    const search = await api.post("/v2/tokens/search", { key: B.pvt, body: { query: `data:${SECRET}` } });
    expect(search.body).toMatchObject({ data: [] });
    const use = { v: `{{ ${A.ids.token} }}` };
    const proxied = await api.post("/proxy", { headers: { "svc-proxy-key": B.proxyKey }, body: use });
    const reacted = await api.post(`/reactors/${B.reactor}/react`, { key: B.pvt, body: { args: use } });
    const aProxy = await api.post("/proxy", {
      key: B.pvt,
      headers: { "svc-proxy-key": A.proxyKey },
      body: use,
    });
    // A proxy's own failures answer `{proxy_error: problem}` (spec, "Invoke a proxy").
    expect(aProxy.body).toMatchObject({ proxy_error: { status: 401 } });
    expect([proxied.status, reacted.status]).toEqual([400, 400]);
    expect(JSON.stringify([proxied.body, reacted.body]) + seen.join()).not.toContain(SECRET);
  });

  it("answers tenant B alike for tenant A's ids and ids that exist nowhere, changing nothing of A", async () => {
    const before = await stateOfA();
    const flip = (v: string) => v.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    const nowhere: Ids = {};
    for (const [k, v] of Object.entries(A.ids))
      nowhere[k] = k === "fp" || k === "nonce" ? flip(v) : randomUUID();
    const normal = (res: HttpResponse, ids: Ids) => {
      let text = String(JSON.stringify(res.body ?? null));
      for (const [k, v] of Object.entries(ids)) text = text.replaceAll(v, `<${k}>`);
      return { status: res.status, body: res.status < 400 || text.replace(/"request_id":"[^"]*"/, "") };
    };
    const names = (r: Route) => JSON.stringify(request(r, A.ids)) !== JSON.stringify(request(r, nowhere));
    for (const r of keyRoutes.filter((r) => r.auth === "key" && names(r))) {
      const key = isToken(r) || !r.permissions?.length ? B.pvt : B.mgmt;
      const [real, none] = [await send(api, r, A.ids, key), await send(api, r, nowhere, key)];
      expect(normal(real, A.ids), `${r.operationId}: existence oracle`).toEqual(normal(none, nowhere));
      const asked = JSON.stringify(request(r, A.ids));
      if (real.status >= 400) refused(real, [400, 403, 404], `${r.operationId} by tenant B`, asked);
      else for (const t of A.text) expect(JSON.stringify(real.body), r.operationId).not.toContain(t);
    }
    const joins = [];
    for (const tx of [A.ids.tx, nowhere.tx]) {
      const write = {
        key: B.pvt,
        headers: { "svc-transaction-id": String(tx) },
        body: { type: "token", data: "b" },
      };
      joins.push(normal(await api.post("/tokens", write), { tx: String(tx) }));
    }
    expect(joins[0]).toEqual(joins[1]);
    // A token id is the tenant's own namespace: B takes A's id as any free one (no 409 oracle).
    const taken = await api.post("/tokens", {
      key: B.pvt,
      body: { id: A.ids.token, type: "token", data: "b" },
    });
    expect(taken.status).toBe(201);
    const result = `/reactors/${B.reactor}/results/${A.ids.result}`;
    refused(await api.get(result, { key: B.pvt }), [404], "B's reactor with A's result id", result);
    expect(await stateOfA()).toEqual(before);
  });

  it("keeps a transaction and an async result to the key that opened them within tenant A", async () => {
    const sibling = await appKey(api, A.managementKey, {
      type: "private",
      permissions: ["token:use", "token:create"],
    });
    const result = `/reactors/${A.ids.reactor}/results/${A.ids.result}`;
    const commit = `/transactions/${A.ids.tx}/commit`;
    const headers = { "svc-transaction-id": String(A.ids.tx) };
    for (const res of [
      await api.post(commit, { key: sibling }),
      await api.post("/tokens", { key: sibling, headers, body: { type: "token", data: "s" } }),
      await api.get(result, { key: sibling }),
    ])
      refused(res, [403, 404, 409], "another key of tenant A", JSON.stringify(A.ids));
    expect((await api.get(result, { key: A.owner })).status).toBe(200);
    expect((await api.post(commit, { key: A.owner })).status).toBe(200);
  });
});
