import { describe, expect, it } from "vitest";
import { type Client, client, createTenant, type HttpResponse } from "#test/support/http.ts";
import { reactionResult as result } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { appKey, application, type TokenBody, VISA } from "#test/support/tokens.ts";

/**
 * Reactors with their own code (the hosted vault's shape: `POST /reactors {name, code, configuration,
 * application}`), react-async and its results.
 */
const svc = useService();
const mergePatch = { "content-type": "application/merge-patch+json" };
const ECHO =
  "module.exports = async (req) => ({ raw: { args: req.args, configuration: req.configuration } });";
const CARD_TOKENIZER = `module.exports = async (req) => ({
  tokenize: { card: { type: "card", data: { number: req.args.number } } },
  raw: { ok: true },
});`;

async function world() {
  const api = client(svc.url);
  const tenant = await createTenant(api, svc.rootKey);
  const member = tenant.managementKey;
  const app = await application(api, member, {
    name: "runs as",
    type: "private",
    permissions: ["token:create", "token:use"],
  });

  const caller = await appKey(api, member, { type: "private", permissions: ["token:use"] });
  return { api, member, app, caller, tenant };
}

async function createOwnCode(api: Client, key: string, body: Record<string, unknown>) {
  const res = await api.post<{ id: string; code?: string }>("/reactors", { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe("reactors with their own code", () => {
  it("creates, runs with every arg and its configuration, replaces and patches a reactor's own code", async () => {
    const { api, member, app, caller } = await world();
    const reactor = await createOwnCode(api, member, {
      name: "echo",
      code: ECHO,
      configuration: { SERVICE_API_KEY: "key_abcd1234" },
      application: { id: app.id },
    });

    const first = await api.post(`/reactors/${reactor.id}/react`, {
      key: caller,
      body: { args: { foo: "bar" } },
    });
    const replaced = await api.put<{ code?: string }>(`/reactors/${reactor.id}`, {
      key: member,
      body: { name: "echo 2", code: "module.exports = async () => ({ raw: { v: 2 } });", configuration: {} },
    });
    const patched = await api.patch(`/reactors/${reactor.id}`, {
      key: member,
      headers: mergePatch,
      body: { name: "echo 3", code: "module.exports = async () => ({ raw: { v: 3 } });" },
    });
    const second = await api.post(`/reactors/${reactor.id}/react`, { key: caller, body: { args: {} } });
    const read = await api.get<{ name: string; code?: string; formula?: unknown }>(
      `/reactors/${reactor.id}`,
      {
        key: member,
      },
    );

    expect(reactor.code).toBe(ECHO);
    expect(first.body).toEqual({
      raw: { args: { foo: "bar" }, configuration: { SERVICE_API_KEY: "key_abcd1234" } },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(patched.status, JSON.stringify(patched.body)).toBe(204);
    expect(second.body).toEqual({ raw: { v: 3 } });
    expect(read.body).toMatchObject({
      name: "echo 3",
      code: "module.exports = async () => ({ raw: { v: 3 } });",
    });
    expect(read.body).not.toHaveProperty("formula");
  });

  it("refuses formula and code together or neither (400), code that cannot run (422), code on a formula's reactor (400)", async () => {
    const { api, member } = await world();
    const formula = await api.post<{ id: string }>("/reactor-formulas", {
      key: member,
      body: { name: "f", code: ECHO },
    });
    const formulaReactor = await api.post<{ id: string }>("/reactors", {
      key: member,
      body: { name: "r", formula: { id: formula.body.id } },
    });

    const both = await api.post("/reactors", {
      key: member,
      body: { name: "x", code: ECHO, formula: { id: formula.body.id } },
    });
    const neither = await api.post("/reactors", { key: member, body: { name: "x" } });
    const broken = await api.post("/reactors", {
      key: member,
      body: { name: "x", code: "module.exports = (" },
    });
    const onFormula = await api.put(`/reactors/${formulaReactor.body.id}`, {
      key: member,
      body: { name: "r", code: ECHO },
    });
    const list = await api.get<{ data: { name: string }[] }>("/reactors", { key: member });

    expect([both.status, neither.status, broken.status, onFormula.status]).toEqual([400, 400, 422, 400]);
    expect(list.body.data.map((r) => r.name)).toEqual(["r"]);
  });
});

describe("react-async and results", () => {
  it("answers 202 with asyncReactorRequestId, then the result as react answers it, to the same key only", async () => {
    const { api, member, app, caller } = await world();
    const other = await appKey(api, member, { type: "private", permissions: ["token:use"] });
    const reactor = await createOwnCode(api, member, {
      name: "echo",
      code: ECHO,
      application: { id: app.id },
    });

    const pending = await api.get(`/reactors/${reactor.id}/results/00000000-0000-4000-8000-000000000000`, {
      key: caller,
    });
    const accepted = await api.post<{ asyncReactorRequestId: string }>(
      `/reactors/${reactor.id}/react-async`,
      {
        key: caller,
        body: { args: { foo: "bar" } },
      },
    );
    const requestId = accepted.body.asyncReactorRequestId;
    const got = await result(api, caller, reactor.id, requestId);
    const byOther = await api.get(`/reactors/${reactor.id}/results/${requestId}`, { key: other });

    expect(pending.status).toBe(404);
    expect(accepted.status).toBe(202);
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ raw: { args: { foo: "bar" }, configuration: {} } });
    expect(byOther.status).toBe(404);
  });

  it("answers a failed run's result as react answers the failure: its status and problem", async () => {
    const { api, member, app, caller } = await world();
    const reactor = await createOwnCode(api, member, {
      name: "fails",
      code: 'module.exports = async () => { throw new Error("card declined"); };',
      application: { id: app.id },
    });

    const sync = await api.post(`/reactors/${reactor.id}/react`, { key: caller, body: { args: {} } });
    const accepted = await api.post<{ asyncReactorRequestId: string }>(
      `/reactors/${reactor.id}/react-async`,
      {
        key: caller,
        body: { args: {} },
      },
    );
    const got = await result(api, caller, reactor.id, accepted.body.asyncReactorRequestId);

    expect(got.status).toBe(sync.status);
    expect(got.headers.get("content-type")).toContain("application/problem+json");
    expect(got.body).toMatchObject({ status: sync.status, errors: { error: ["card declined"] } });
  });

  it("keeps a result 24 hours by the service clock", async () => {
    const { api, member, app, caller } = await world();
    const reactor = await createOwnCode(api, member, {
      name: "echo",
      code: ECHO,
      application: { id: app.id },
    });
    const accepted = await api.post<{ asyncReactorRequestId: string }>(
      `/reactors/${reactor.id}/react-async`,
      {
        key: caller,
        body: { args: {} },
      },
    );
    const path = `/reactors/${reactor.id}/results/${accepted.body.asyncReactorRequestId}`;
    await result(api, caller, reactor.id, accepted.body.asyncReactorRequestId);

    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 23 * 3600 } });
    const before = await api.get(path, { key: caller });
    await api.post("/_test/clock", { key: svc.rootKey, body: { advance_seconds: 3600 } });
    const after = await api.get(path, { key: caller });

    expect(before.status).toBe(200);
    expect(after.status).toBe(404);
  });

  it("presents tokens the code creates to the caller as react does: no card number to a key that cannot read it", async () => {
    const { api, member, app, caller } = await world();
    const reactor = await createOwnCode(api, member, {
      name: "tokenizer",
      code: CARD_TOKENIZER,
      application: { id: app.id },
    });

    const sync = await api.post<{ tokens: { card: TokenBody } }>(`/reactors/${reactor.id}/react`, {
      key: caller,
      body: { args: { number: VISA } },
    });
    const accepted = await api.post<{ asyncReactorRequestId: string }>(
      `/reactors/${reactor.id}/react-async`,
      {
        key: caller,
        body: { args: { number: VISA } },
      },
    );
    const got = (await result(api, caller, reactor.id, accepted.body.asyncReactorRequestId)) as HttpResponse<{
      tokens: { card: TokenBody };
    }>;

    const {
      id: _a,
      created_at: _b,
      ...syncCard
    } = sync.body.tokens.card as TokenBody & { created_at?: string };
    const {
      id: _c,
      created_at: _d,
      ...asyncCard
    } = got.body.tokens.card as TokenBody & { created_at?: string };
    expect(asyncCard).toEqual(syncCard);
    expect(JSON.stringify(got.body)).not.toContain(VISA);
  });
});
