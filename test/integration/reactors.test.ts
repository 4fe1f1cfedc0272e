import { describe, expect, it } from "vitest";
import { client, createTenant } from "#test/support/http.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";

// A synchronous react stops after 1 s here (20 s by default), so the timeout test stays short.
process.env.SVC_SYNC_REACT_TIMEOUT_MS = "1000";
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };

const ECHO = `module.exports = async function (req) {
  return { raw: { args: req.args, configuration: req.configuration, svc: req.svc !== null } };
};`;

async function setup(code = ECHO, formulaExtra: Record<string, unknown> = {}) {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const app = await api.post<{ id: string; key: string }>("/applications", {
    key: tenant.managementKey,
    body: { name: "reactor app", type: "private", permissions: ["token:create", "token:read", "token:use"] },
  });
  const pub = await appKey(api, tenant.managementKey, { type: "public", permissions: ["token:create"] });
  const formula = await api.post<{ id: string }>("/reactor-formulas", {
    key: tenant.managementKey,
    body: {
      name: "Echo",
      code,
      configuration: [{ name: "region", type: "string" }],
      request_parameters: [
        { name: "card.number", type: "string" },
        { name: "amount", type: "number" },
        { name: "note", type: "string", optional: true },
      ],
      ...formulaExtra,
    },
  });
  expect(formula.status, JSON.stringify(formula.body)).toBe(201);
  const reactor = await api.post<{ id: string; formula: { id: string }; application?: { id: string } }>(
    "/reactors",
    {
      key: tenant.managementKey,
      body: {
        name: "echo",
        formula: { id: formula.body.id },
        configuration: { region: "eu" },
        application: { id: app.body.id },
      },
    },
  );
  expect(reactor.status, JSON.stringify(reactor.body)).toBe(201);
  const card = await api.post<TokenBody>("/tokens", {
    key: pub,
    body: { type: "card", data: { number: VISA, expiration_month: 1, expiration_year: 2031 } },
  });
  return {
    api,
    ...tenant,
    user: app.body.key,
    appId: app.body.id,
    pub,
    formulaId: formula.body.id,
    reactor: reactor.body,
    card: card.body,
  };
}

describe("reactor formulas and reactors", () => {
  it("creates, reads, lists, replaces, patches and deletes, checking configuration against the formula", async () => {
    const { api, managementKey, reactor, formulaId } = await setup();

    const read = await api.get<{
      formula: { id: string; name: string };
      configuration: Record<string, unknown>;
    }>(`/reactors/${reactor.id}`, { key: managementKey });
    const listed = await api.get<{ data: { id: string }[] }>("/reactors?name=ec*", { key: managementKey });
    const missingConfig = await api.post("/reactors", {
      key: managementKey,
      body: { name: "x", formula: { id: formulaId }, configuration: {} },
    });
    const undeclared = await api.post("/reactors", {
      key: managementKey,
      body: { name: "x", formula: { id: formulaId }, configuration: { region: "eu", other: 1 } },
    });
    const putWithFormula = await api.put(`/reactors/${reactor.id}`, {
      key: managementKey,
      body: { name: "x", configuration: { region: "us" }, formula: { id: formulaId } },
    });
    const put = await api.put<{ name: string; configuration: Record<string, unknown> }>(
      `/reactors/${reactor.id}`,
      {
        key: managementKey,
        body: { name: "renamed", configuration: { region: "us" } },
      },
    );
    const patch = await api.patch(`/reactors/${reactor.id}`, {
      key: managementKey,
      headers: mergePatch,
      body: { name: "patched" },
    });
    const patch415 = await api.patch(`/reactors/${reactor.id}`, { key: managementKey, body: { name: "x" } });
    const formulaInUse = await api.delete(`/reactor-formulas/${formulaId}`, { key: managementKey });
    const deleted = await api.delete(`/reactors/${reactor.id}`, { key: managementKey });
    const gone = await api.get(`/reactors/${reactor.id}`, { key: managementKey });

    expect(read.body.formula).toMatchObject({ id: formulaId, name: "Echo" });
    expect(read.body.configuration).toEqual({ region: "eu" });
    expect(listed.body.data.map((r) => r.id)).toEqual([reactor.id]);
    expect(missingConfig.body).toHaveProperty(["errors", "configuration.region"]);
    expect(undeclared.body).toHaveProperty(["errors", "configuration.other"]);
    expect(putWithFormula.status).toBe(400);
    expect(put.body).toMatchObject({ name: "renamed", configuration: { region: "us" } });
    expect(patch.status).toBe(204);
    expect(patch415.status).toBe(415);
    expect(formulaInUse.status).toBe(409);
    expect(deleted.status).toBe(204);
    expect(gone.status).toBe(404);
  });

  it("asks the sandbox to prepare the tenant's runner when formula code is saved", async () => {
    const prepared: string[] = [];
    const sandbox = svc.service.deps.sandbox;
    sandbox.prepare = async (tenantId) => {
      prepared.push(tenantId);
    };
    try {
      const { api, managementKey, tenantId, formulaId } = await setup();
      const replaced = await api.put(`/reactor-formulas/${formulaId}`, {
        key: managementKey,
        body: { name: "Echo 2", code: ECHO },
      });
      const bad = await api.post("/reactor-formulas", {
        key: managementKey,
        body: { name: "bad", code: "module.exports = (" },
      });

      expect([replaced.status, bad.status]).toEqual([200, 422]);
      expect(prepared).toEqual([tenantId, tenantId]);
    } finally {
      delete sandbox.prepare;
    }
  });

  it("refuses a formula whose code does not compile (422) and a management application (400)", async () => {
    const { api, managementKey, managementAppId, formulaId } = await setup();

    const bad = await api.post("/reactor-formulas", {
      key: managementKey,
      body: { name: "bad", code: "module.exports = (" },
    });
    const mgmtApp = await api.post("/reactors", {
      key: managementKey,
      body: {
        name: "x",
        formula: { id: formulaId },
        configuration: { region: "eu" },
        application: { id: managementAppId },
      },
    });

    expect(bad.status).toBe(422);
    expect(mgmtApp.status).toBe(400);
  });
});

describe("react (synchronous)", () => {
  it("detokenizes args (a card token supplies card.number), validates, casts, removes undeclared, and runs", async () => {
    const { api, user, reactor, card } = await setup();

    const res = await api.post<{
      raw: { args: Record<string, unknown>; configuration: unknown; svc: boolean };
    }>(`/reactors/${reactor.id}/react`, {
      key: user,
      body: { args: { card: `{{ ${card.id} }}`, amount: "12.50", extra: "dropped" } },
    });

    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({
      args: { card: { number: VISA }, amount: 12.5 },
      configuration: { region: "eu" },
      svc: true,
    });
  });

  it.each([
    [{ card: { number: VISA } }, "args.amount"],
    [{ card: { number: VISA }, amount: "lots" }, "args.amount"],
    [{ amount: 1 }, "args.card.number"],
  ])("answers 400 for args %j (missing or uncastable %s)", async (args, field) => {
    const { api, user, reactor } = await setup();

    const res = await api.post(`/reactors/${reactor.id}/react`, { key: user, body: { args } });

    expect(res.status).toBe(400);
    expect(res.body).toHaveProperty(["errors", field]);
  });

  it("needs token:use on each detokenized container (403), rejects unknown tokens (400) and more than 100 (400)", async () => {
    const { api, managementKey, reactor, card } = await setup();
    const bankOnly = await appKey(api, managementKey, {
      type: "private",
      rules: [{ priority: 1, container: "/bank/", transform: "reveal", permissions: ["token:use"] }],
    });
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`t${i}`, `{{ tok-${i} }}`]));

    const forbidden = await api.post(`/reactors/${reactor.id}/react`, {
      key: bankOnly,
      body: { args: { card: `{{ ${card.id} }}`, amount: 1 } },
    });
    const unknown = await api.post(`/reactors/${reactor.id}/react`, {
      key: bankOnly,
      body: { args: { card: "{{ nope-token }}", amount: 1 } },
    });
    const tooMany = await api.post(`/reactors/${reactor.id}/react`, { key: bankOnly, body: { args: many } });
    const noTokenUse = await api.post(`/reactors/${reactor.id}/react`, {
      key: managementKey,
      body: { args: {} },
    });

    expect(forbidden.status).toBe(403);
    expect(JSON.stringify(forbidden.body)).not.toContain(VISA);
    expect(unknown.status).toBe(400);
    expect(tooMany.status).toBe(400);
    expect(noTokenUse.status).toBe(403);
  });

  it("turns the code's tokenize block into real tokens and answers them with raw", async () => {
    const { api, user, reactor: _r, managementKey, appId } = await setup();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: {
        name: "Tokenizer",
        code: `module.exports = async (req) => ({
          raw: { ok: true },
          tokenize: { card: { type: "card_number", data: req.args.number }, note: { type: "token", data: "hello" } },
        });`,
      },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "t", formula: { id: formula.body.id }, configuration: {}, application: { id: appId } },
    });

    const res = await api.post<{ raw: unknown; tokens: { card: TokenBody; note: TokenBody } }>(
      `/reactors/${reactor.body.id}/react`,
      {
        key: user,
        body: { args: { number: VISA } },
      },
    );
    const stored = await api.get<TokenBody>(`/tokens/${res.body.tokens.card.id}`, { key: user });

    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({ ok: true });
    expect(res.body.tokens.card.data).toBe("XXXXXXXXXXXX4242");
    expect(stored.body.type).toBe("card_number");
    expect(JSON.stringify(res.body)).not.toContain(VISA);
  });

  it.each([
    ["throw new BadRequestError('bad card', { number: ['is wrong'] })", 400],
    ["throw new AuthenticationError('who')", 401],
    ["throw new PaymentRequiredError('pay')", 402],
    ["throw new AuthorizationError('no')", 403],
    ["throw new RateLimitError('slow down')", 429],
    ["throw new ServiceUnavailableError('later')", 503],
    ["throw new Error('secret internals at /var/task')", 500],
    ["throw new CustomHttpResponseError({ status: 409, body: { custom: 'yes' } })", 409],
  ])("translates %s into %i", async (statement, status) => {
    const { api, user, managementKey, appId } = await setup();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: { name: "Thrower", code: `module.exports = async () => { ${statement}; };` },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "t", formula: { id: formula.body.id }, configuration: {}, application: { id: appId } },
    });

    const res = await api.post<Record<string, unknown>>(`/reactors/${reactor.body.id}/react`, {
      key: user,
      body: {},
    });

    expect(res.status).toBe(status);
    if (status === 409) expect(res.body).toEqual({ custom: "yes" });
    else expect(res.headers.get("content-type")).toBe("application/problem+json");
    if (status === 500) {
      // The message is the developer's to read (the caller holds token:use); the host path is not.
      expect(res.body).toMatchObject({
        detail: "secret internals at <path>",
        errors: { error: ["secret internals at <path>"] },
      });
      expect(JSON.stringify(res.body)).not.toContain("/var/task");
    }
    if (status === 400) expect(res.body).toHaveProperty(["errors", "number"]);
  });

  it("answers 422 for code that exports no function, and logs each invocation without args", async () => {
    const { api, user, managementKey, appId, reactor, card } = await setup();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: { name: "NotAFunction", code: "module.exports = 42;" },
    });
    const broken = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "b", formula: { id: formula.body.id }, configuration: {}, application: { id: appId } },
    });
    await api.post(`/reactors/${reactor.id}/react`, {
      key: user,
      body: { args: { card: `{{ ${card.id} }}`, amount: 1 } },
    });

    const res = await api.post(`/reactors/${broken.body.id}/react`, { key: user, body: {} });
    const logs = await api.get<{ data: { operation: string }[] }>(`/logs?entity_id=${reactor.id}`, {
      key: managementKey,
    });

    expect(res.status).toBe(422);
    expect(logs.body.data.map((l) => l.operation)).toContain("invoke");
    expect(JSON.stringify(logs.body)).not.toContain(VISA);
  });

  it("answers a clear 504 when a synchronous run passes its limit, and the next run works", async () => {
    const { api, user, managementKey, appId, reactor, card } = await setup();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: { name: "Spin", code: "module.exports = async () => { for (;;) {} };" },
    });
    const spinner = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "s", formula: { id: formula.body.id }, configuration: {}, application: { id: appId } },
    });

    const res = await api.post<{ detail: string }>(`/reactors/${spinner.body.id}/react`, {
      key: user,
      body: {},
    });
    const next = await api.post(`/reactors/${reactor.id}/react`, {
      key: user,
      body: { args: { card: `{{ ${card.id} }}`, amount: 1 } },
    });

    expect(res.status).toBe(504);
    expect(res.body.detail).toContain("1000 ms");
    expect(next.status).toBe(200);
  });

  it("runs a retried react once with the same idempotency key", async () => {
    const { api, user, managementKey, appId } = await setup();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: managementKey,
      body: {
        name: "Once",
        code: "module.exports = async () => ({ tokenize: { t: { type: 'token', data: 'x' } } });",
      },
    });
    const reactor = await api.post<{ id: string }>("/reactors", {
      key: managementKey,
      body: { name: "o", formula: { id: formula.body.id }, configuration: {}, application: { id: appId } },
    });
    const headers = { "svc-idempotency-key": "react-once" };

    const first = await api.post<{ tokens: { t: { id: string } } }>(`/reactors/${reactor.body.id}/react`, {
      key: user,
      body: {},
      headers,
    });
    const second = await api.post<{ tokens: { t: { id: string } } }>(`/reactors/${reactor.body.id}/react`, {
      key: user,
      body: {},
      headers,
    });

    expect(second.headers.get("svc-idempotent-replayed")).toBe("true");
    expect(second.body.tokens.t.id).toBe(first.body.tokens.t.id);
  });
});

describe("reactor access", () => {
  it("answers 404 for another tenant's formulas and reactors, and 403 to keys without the permission", async () => {
    const mine = await setup();
    const other = await setup();
    const { api } = mine;
    const reader = await appKey(api, mine.managementKey, {
      type: "management",
      permissions: ["reactor:read"],
    });

    const crossTenant = await Promise.all([
      api.get(`/reactors/${other.reactor.id}`, { key: mine.managementKey }),
      api.get(`/reactor-formulas/${other.formulaId}`, { key: mine.managementKey }),
      api.put(`/reactors/${other.reactor.id}`, {
        key: mine.managementKey,
        body: { name: "x", configuration: { region: "eu" } },
      }),
      api.delete(`/reactors/${other.reactor.id}`, { key: mine.managementKey }),
      api.delete(`/reactor-formulas/${other.formulaId}`, { key: mine.managementKey }),
      api.post(`/reactors/${other.reactor.id}/react`, { key: mine.user, body: {} }),
    ]);
    const forbidden = await Promise.all([
      api.post("/reactor-formulas", {
        key: reader,
        body: { name: "x", code: "module.exports = async () => ({})" },
      }),
      api.post("/reactors", {
        key: reader,
        body: { name: "x", formula: { id: mine.formulaId }, configuration: {} },
      }),
      api.delete(`/reactors/${mine.reactor.id}`, { key: reader }),
      api.post("/tenants/self/webhook-secret/rotate", { key: reader }),
      // Reading the signing secret is forging callbacks: not a reader's right either.
      api.get("/tenants/self/webhook-secret", { key: reader }),
    ]);
    const listed = await api.get<{ data: { id: string }[] }>("/reactors", { key: mine.managementKey });

    expect(crossTenant.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(forbidden.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(listed.body.data.map((r) => r.id)).not.toContain(other.reactor.id);
  });
});

describe("webhook secret", () => {
  it("answers a Standard Webhooks secret, the same until rotated", async () => {
    const { api, managementKey } = await setup();

    const first = await api.get<{ secret: string }>("/tenants/self/webhook-secret", { key: managementKey });
    const again = await api.get<{ secret: string }>("/tenants/self/webhook-secret", { key: managementKey });
    const rotated = await api.post<{ secret: string }>("/tenants/self/webhook-secret/rotate", {
      key: managementKey,
    });
    const after = await api.get<{ secret: string }>("/tenants/self/webhook-secret", { key: managementKey });

    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(again.body.secret).toBe(first.body.secret);
    expect(rotated.body.secret).not.toBe(first.body.secret);
    expect(after.body.secret).toBe(rotated.body.secret);
  });
});
