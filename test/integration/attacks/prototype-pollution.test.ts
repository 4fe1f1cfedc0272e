import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type Client, client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, type TokenPage, VISA } from "#test/support/tokens.ts";

// Attack class: a request-supplied key walked as a property path (`__proto__`, `constructor`, `prototype`)
// changes Object.prototype of the process that serves every tenant. The service runs in this process, so a
// polluted prototype is visible here too.
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const POLLUTED = ["expires_at", "polluted", "mask", "session_id"];

const ECHO = "module.exports = async function (req) { return { raw: { args: req.args } }; };";

afterEach(() => {
  // On vulnerable code the attack leaves the prototype polluted; clean up so one failure does not cascade.
  for (const name of POLLUTED) delete (Object.prototype as Record<string, unknown>)[name];
});

/** GET with raw header pairs (fetch itself trips over a `__proto__` header under --disable-proto=throw). */
function statusWithHeaders(url: string, headers: [string, string][]): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: headers.flat() }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on("end", () => resolve(`${res.statusCode} ${body.slice(0, 200)}`));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A bystander tenant, created before the attack, that must keep working afterwards. */
async function bystander(api: Client) {
  const tenant = await createTenant(api, svc.rootKey, "Bystander");
  const key = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ["token:create", "token:read"],
  });
  return key;
}

async function expectUnharmed(api: Client, key: string) {
  const created = await api.post<TokenBody>("/tokens", {
    key,
    body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2031 } },
  });
  const listed = await api.get<TokenPage>("/tokens", { key });
  const plain: Record<string, unknown> = {};
  expect(POLLUTED.filter((name) => name in plain)).toEqual([]);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.expires_at).toBeUndefined();
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  expect(listed.body.data.map((t) => t.id)).toContain(created.body.id);
}

async function attacker(api: Client) {
  const tenant = await createTenant(api, svc.rootKey, "Attacker");
  const key = await appKey(api, tenant.managementKey, {
    type: "private",
    permissions: ["token:create", "token:read", "token:update", "token:use"],
  });
  return { ...tenant, key };
}

function expectRefused(res: { status: number; headers: Headers; body: unknown }) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
}

describe("prototype pollution through request keys", () => {
  it("refuses the reported formula parameter `__proto__.expires_at` and its react args; other tenants keep working", async () => {
    const api = client(svc.url);
    const other = await bystander(api);
    const evil = await attacker(api);

    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: evil.managementKey,
      body: {
        name: "Pollute",
        code: ECHO,
        request_parameters: [{ name: "__proto__.expires_at", type: "string" }],
      },
    });
    const constructorPath = await api.post("/reactor-formulas", {
      key: evil.managementKey,
      body: {
        name: "Pollute 2",
        code: ECHO,
        request_parameters: [{ name: "constructor.prototype.polluted", type: "string" }],
      },
    });
    const configName = await api.post("/reactor-formulas", {
      key: evil.managementKey,
      body: { name: "Pollute 3", code: ECHO, configuration: [{ name: "__proto__", type: "string" }] },
    });
    // Had the formula been stored (as on vulnerable code), the reaction is what pollutes.
    if (formula.status === 201) {
      const reactor = await api.post<{ id: string }>("/reactors", {
        key: evil.managementKey,
        body: { name: "pollute", formula: { id: formula.body.id } },
      });
      await api.call("POST", `/reactors/${reactor.body.id}/react`, {
        key: evil.key,
        headers: { "content-type": "application/json" },
        rawBody: '{"args":{"__proto__":{"expires_at":"2000-01-01T00:00:00Z"}}}',
      });
    }

    await expectUnharmed(api, other);
    expectRefused(formula);
    expectRefused(constructorPath);
    expectRefused(configName);
  });

  it("refuses `__proto__` args even for a formula without declared parameters", async () => {
    const api = client(svc.url);
    const other = await bystander(api);
    const evil = await attacker(api);
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: evil.managementKey,
      body: { name: "Open", code: ECHO },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: evil.managementKey,
      body: { name: "open", formula: { id: formula.body.id } },
    });
    const react = await api.call("POST", `/reactors/${reactor.body.id}/react`, {
      key: evil.key,
      headers: { "content-type": "application/json" },
      rawBody: '{"args":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}',
    });

    await expectUnharmed(api, other);
    expectRefused(react);
  });

  it("refuses `__proto__`, `constructor` and `prototype` keys in metadata, merge-patch bodies and data", async () => {
    const api = client(svc.url);
    const other = await bystander(api);
    const evil = await attacker(api);
    const raw = (body: string) => ({
      key: evil.key,
      headers: { "content-type": "application/json" },
      rawBody: body,
    });
    const token = await api.post<TokenBody>("/tokens", {
      key: evil.key,
      body: { type: "token", data: { a: "b" } },
    });

    const metadata = await api.call(
      "POST",
      "/tokens",
      raw('{"type":"token","data":"x","metadata":{"__proto__":"polluted"}}'),
    );
    const metadataConstructor = await api.post("/tokens", {
      key: evil.key,
      body: { type: "token", data: "x", metadata: { constructor: "x" } },
    });
    const data = await api.call(
      "POST",
      "/tokens",
      raw('{"type":"token","data":{"__proto__":{"mask":"{{ data }}"}}}'),
    );
    const patch = await api.call("PATCH", `/tokens/${token.body.id}`, {
      key: evil.key,
      headers: mergePatch,
      rawBody: '{"data":{"__proto__":{"polluted":"yes"}},"metadata":{"__proto__":{"polluted":"yes"}}}',
    });
    const patchConstructor = await api.patch(`/tokens/${token.body.id}`, {
      key: evil.key,
      headers: mergePatch,
      body: { data: { constructor: { prototype: { polluted: "yes" } } } },
    });
    const reactorConfig = await api.call("POST", "/reactors", {
      key: evil.managementKey,
      headers: { "content-type": "application/json" },
      rawBody: '{"name":"x","formula":{"id":"nope"},"configuration":{"__proto__":{"polluted":"yes"}}}',
    });
    const query = await api.get("/tokens?__proto__=a&__proto__=b&constructor=c", { key: evil.key });
    const metadataQuery = await api.get("/tokens?metadata.__proto__=a", { key: evil.key });
    // A header may be called __proto__ too: an ordinary name wherever headers are mapped.
    const header = await statusWithHeaders(`${svc.url}/tokens`, [
      ["host", new URL(svc.url).host],
      ["svc-api-key", evil.key],
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);

    await expectUnharmed(api, other);
    expect(header).toMatch(/^200 /);
    for (const res of [
      metadata,
      metadataConstructor,
      data,
      patch,
      patchConstructor,
      reactorConfig,
      query,
      metadataQuery,
    ])
      expectRefused(res);
  });

  it("refuses expressions and JSONPaths that name `__proto__`, `constructor` or `prototype`", async () => {
    const api = client(svc.url);
    const other = await bystander(api);
    const evil = await attacker(api);
    const create = (extra: Record<string, unknown>) =>
      api.post("/tokens", { key: evil.key, body: { type: "token", data: { a: "b" }, ...extra } });

    const refused = [
      await create({ mask: "{{ data.constructor.name }}" }),
      await create({ mask: "{{ data['__proto__'] }}" }),
      await create({ mask: { x: "{% assign p = data.prototype %}{{ p }}" } }),
      await create({ mask: "{{ data | json: '$.constructor' }}" }),
      await create({ fingerprint_expression: "{{ data.__proto__ }}" }),
      await create({ search_indexes: ["{{ data | json: \"$..['__proto__']\" }}"] }),
      await create({ id: "{{ data.constructor }}" }),
    ];
    const ordinary = await create({ mask: "{{ data.a }}: prototypes of constructors" });

    await expectUnharmed(api, other);
    for (const res of refused) expectRefused(res);
    expect(ordinary.status, JSON.stringify(ordinary.body)).toBe(201);
  });
});
