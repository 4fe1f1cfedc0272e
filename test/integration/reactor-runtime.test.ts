import { describe, expect, it } from "vitest";
import type { Client, HttpResponse } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";

// Callback retries wait 50 ms instead of minutes.
process.env.SVC_CALLBACK_RETRY_BASE_SECONDS = "0.05";
const svc = useService({ allowPrivateDestinations: true });

/** Requests to /gate wait here until the test answers them (a partner the code waits on). */
const gated: (() => void)[] = [];
let gateReached: () => void = () => {};

/** Callback deliveries by path (a receiver on 127.0.0.1). */
const deliveries = new Map<string, string>();
const receiver = useLocalServer((req, res, body) => {
  if (req.url === "/gate") {
    gated.push(() => res.end("go"));
    gateReached();
    return;
  }
  deliveries.set(String(req.url), body.toString());
  res.writeHead(204);
  res.end();
});

interface Reactor {
  api: Client;
  react: (
    args?: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ) => Promise<HttpResponse<Record<string, unknown>>>;
}

/** A tenant, an application and a reactor running `code`; `react(args)` invokes it with the app's key. */
async function reactorRunning(code: string, parameters: string[] = []): Promise<Reactor> {
  const { api, app, reactorId } = await createReactor(svc, {
    formula: {
      name: "Runtime",
      code,
      request_parameters: parameters.map((name) => ({ name, type: "string", optional: true })),
    },
    permissions: ["token:create", "token:read", "token:use"],
  });
  return {
    api,
    react: (args = {}, extra = {}) =>
      api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args, ...extra } }),
  };
}

async function delivered(
  path: string,
  timeoutMs = 20_000,
): Promise<{ data: { status: number; body: unknown } }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = deliveries.get(path);
    if (body !== undefined) return JSON.parse(body) as { data: { status: number; body: unknown } };
    if (Date.now() > deadline) throw new Error(`no delivery to ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("errors a developer can act on", () => {
  it("answers an unhandled error as 500 problem+json with its message in errors.error, and the callback carries the same body", async () => {
    const { react } = await reactorRunning(
      `module.exports = async () => { const x = undefined; throw new Error("card declined by " + "acquirer"); };`,
    );

    const sync = await react();
    const accepted = await react({}, { callback_url: `${receiver.url}/unhandled` });
    const callback = await delivered("/unhandled");

    expect(sync.status).toBe(500);
    expect(sync.headers.get("content-type")).toBe("application/problem+json");
    expect(sync.body).toMatchObject({
      status: 500,
      title: "Reactor Runtime Error",
      detail: "card declined by acquirer",
      errors: { error: ["card declined by acquirer"] },
    });
    expect(JSON.stringify(sync.body)).not.toMatch(/transform\.js|child\.mjs|\bat .*:\d+:\d+/);
    expect(accepted.status).toBe(202);
    const { request_id: _sync, ...syncBody } = sync.body as Record<string, unknown>;
    const { request_id: _async, ...asyncBody } = callback.data.body as Record<string, unknown>;
    expect(callback.data.status).toBe(500);
    expect(asyncBody).toEqual(syncBody);
  });

  it("answers a TypeError of the code with its message, and a thrown string as the message", async () => {
    const { react } = await reactorRunning(
      `module.exports = async (req) => { if (req.args.kind === "string") throw "plain words"; return req.args.card.number; };`,
      ["kind"],
    );

    const typeError = await react();
    const thrownString = await react({ kind: "string" });

    expect(typeError.status).toBe(500);
    expect(typeError.body).toMatchObject({ errors: { error: [expect.stringContaining("number")] } });
    expect(thrownString.body).toMatchObject({ detail: "plain words", errors: { error: ["plain words"] } });
  });

  it("runs a formula written for the hosted vault's SDK unchanged: require by its module name, each class's status and errors", async () => {
    const { react } = await reactorRunning(
      `const { AuthenticationError, AuthorizationError, BadRequestError, CustomHttpResponseError,
         InvalidPaymentMethodError, InvalidReactorConfigurationError, RateLimitError, ReactorRuntimeError,
         ServiceUnavailableError } = require("@basis-theory/basis-theory-reactor-formulas-sdk-js");
       const classes = { AuthenticationError, AuthorizationError, BadRequestError, InvalidPaymentMethodError,
         InvalidReactorConfigurationError, RateLimitError, ReactorRuntimeError, ServiceUnavailableError };
       module.exports = async (req) => {
         if (req.args.kind === "custom") throw new CustomHttpResponseError({ status: 418, body: { teapot: true } });
         if (req.args.kind === "runtime-of-error") throw new ReactorRuntimeError(new Error("vendor said no"));
         if (req.args.kind === "none") throw new BadRequestError();
         throw new classes[req.args.kind]({ card: "declined", amount: ["too small", "not a number"], detail: { code: 7 } });
       };`,
      ["kind"],
    );
    const expected: [string, number, string][] = [
      ["BadRequestError", 400, "Bad Request"],
      ["InvalidReactorConfigurationError", 400, "Invalid Reactor Configuration"],
      ["AuthenticationError", 401, "Authentication Failed"],
      ["InvalidPaymentMethodError", 402, "Invalid Payment Method"],
      ["AuthorizationError", 403, "Forbidden"],
      ["RateLimitError", 429, "Rate Limit Exceeded"],
      ["ReactorRuntimeError", 500, "Reactor Runtime Error"],
      ["ServiceUnavailableError", 503, "Service Unavailable"],
    ];

    for (const [kind, status, detail] of expected) {
      const res = await react({ kind });
      expect(res.status, kind).toBe(status);
      expect(res.body, kind).toMatchObject({
        title: kind,
        detail,
        errors: { card: ["declined"], amount: ["too small", "not a number"], detail: ['{"code":7}'] },
      });
    }
    const custom = await react({ kind: "custom" });
    const runtime = await react({ kind: "runtime-of-error" });
    const bare = await react({ kind: "none" });
    expect(custom.status).toBe(418);
    expect(custom.body).toEqual({ teapot: true });
    expect(runtime.body).toMatchObject({ status: 500, errors: { error: ["vendor said no"] } });
    expect(bare.status).toBe(400);
    expect(bare.body).toMatchObject({ detail: "Bad Request" });
  });

  it("offers the same classes as globals, which code may shadow with its own names", async () => {
    const { react } = await reactorRunning(
      `class RateLimitError extends Error {}
       module.exports = async (req) => {
         if (req.args.kind === "global") throw new BadRequestError("card is required", { card: ["is required"] });
         if (req.args.kind === "shadowed") throw new RateLimitError("mine");
         return { raw: { same: BadRequestError === require("@basis-theory/basis-theory-reactor-formulas-sdk-js").BadRequestError } };
       };`,
      ["kind"],
    );

    const global = await react({ kind: "global" });
    const shadowed = await react({ kind: "shadowed" });
    const same = await react();

    expect(global.status).toBe(400);
    expect(global.body).toMatchObject({ detail: "card is required", errors: { card: ["is required"] } });
    expect(shadowed.status).toBe(500);
    expect(shadowed.body).toMatchObject({ errors: { error: ["mine"] } });
    expect(same.body).toEqual({ raw: { same: true } });
  });
});

describe("packages", () => {
  it("resolves the curated packages, each working in the sandbox", async () => {
    const { react } = await reactorRunning(`
      const { v4, validate } = require("uuid");
      const CryptoJS = require("crypto-js");
      const forge = require("node-forge");
      const jose = require("jose");
      const { parse } = require("csv-parse/sync");
      const { create } = require("xmlbuilder2");
      const yup = require("yup");
      const { JSONPath } = require("jsonpath-plus");
      const axios = require("axios");
      module.exports = async () => {
        const secret = new TextEncoder().encode("0123456789abcdef0123456789abcdef");
        const jwt = await new jose.SignJWT({ sub: "card" }).setProtectedHeader({ alg: "HS256" }).sign(secret);
        const md = forge.md.sha256.create();
        md.update("abc");
        let invalid;
        try { await yup.object({ amount: yup.number().required() }).validate({}); } catch (e) { invalid = e.errors; }
        return { raw: {
          uuid: validate(v4()),
          hmac: CryptoJS.HmacSHA256("a", "k").toString(),
          forge: md.digest().toHex(),
          jwt: (await jose.jwtVerify(jwt, secret)).payload.sub,
          csv: parse("a,b\\n1,2\\n", { columns: true }),
          xml: create().ele("root").ele("a").txt("1").end(),
          invalid,
          path: JSONPath({ path: "$.items[*].id", json: { items: [{ id: 1 }, { id: 2 }] } }),
          axios: typeof axios.create,
        } };
      };`);

    const res = await react();

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      raw: {
        uuid: true,
        hmac: "78da91511e675587f5b9df78bedebaf5560da2abb88162ee875dcdf744951d9e",
        forge: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        jwt: "card",
        csv: [{ a: "1", b: "2" }],
        xml: '<?xml version="1.0"?><root><a>1</a></root>',
        invalid: ["amount is a required field"],
        path: [1, 2],
        axios: "function",
      },
    });
  });

  it("gives each run its own instance of a package: what one run changes, the next run of the same code never sees", async () => {
    const { react } = await reactorRunning(
      `const axios = require("axios");
       const uuid = require("uuid");
       module.exports = async (req) => {
         const seen = { header: axios.defaults.headers.common["x-secret"] ?? null, v4: uuid.v4() === "fixed" };
         axios.defaults.headers.common["x-secret"] = req.args.secret;
         uuid.v4 = () => "fixed";
         return { raw: seen };
       };`,
      ["secret"],
    );

    const first = await react({ secret: "4242424242424242" });
    const second = await react({ secret: "other" });

    expect(first.body).toEqual({ raw: { header: null, v4: false } });
    expect(second.body).toEqual({ raw: { header: null, v4: false } });
  });

  it("refuses anything else by name, listing what may be required", async () => {
    const { react } = await reactorRunning(`module.exports = async () => require("stripe");`);

    const res = await react();

    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      errors: {
        error: [expect.stringMatching(/^Cannot require 'stripe': the code may require only .*axios.*uuid/)],
      },
    });
  });
});

describe("svc calls of a running reaction", () => {
  it("answer a token id no token can have with 400, never asking the store for a key of megabytes", async () => {
    // Before: retrieve, update and delete handed a 2 MiB id to the store as a key (serialised, signed and sent:
    // about 60 ms of the shared event loop and hundreds of MB per call), where the HTTP API answers 400.
    const code = `module.exports = async (req) => {
      const outcome = (p) => p.then(() => 200, (e) => e.status);
      const long = "a".repeat(2 * 1024 * 1024);
      return { raw: {
        retrieve: await outcome(req.svc.tokens.retrieve(long)),
        update: await outcome(req.svc.tokens.update(long, { metadata: { a: "b" } })),
        delete: await outcome(req.svc.tokens.delete(long)),
        over: await outcome(req.svc.tokens.retrieve("b".repeat(2000))),
      } };
    };`;
    const { api, app, reactorId } = await createReactor(svc, {
      formula: { name: "long ids", code },
      permissions: ["token:read", "token:use", "token:update", "token:delete"],
    });
    const tokens = svc.service.deps.tokens as unknown as Record<string, (...args: unknown[]) => unknown>;
    const longestKey: number[] = [0];
    const get = tokens.get;
    tokens.get = (...args: unknown[]) => {
      longestKey.push(...args.filter((a): a is string => typeof a === "string").map((a) => a.length));
      return get?.apply(svc.service.deps.tokens, args);
    };
    try {
      const res = await api.post(`/reactors/${reactorId}/react`, { key: app.key, body: { args: {} } });

      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ raw: { retrieve: 400, update: 400, delete: 400, over: 400 } });
      expect(Math.max(...longestKey)).toBeLessThanOrEqual(900);
    } finally {
      tokens.get = get as (...args: unknown[]) => unknown;
    }
  });

  it("are refused (403) once the application the code acts as is deleted, as its keys are", async () => {
    // Before: the run kept the application's access it started with, up to 20 s (react) or 210 s (react-async,
    // callbacks), its svc reads answered while the application's keys got 401.
    const code = `module.exports = async (req) => {
      const read = () => req.svc.tokens.retrieve(req.args.id).then(() => 200, (e) => e.status);
      const before = await read();
      await fetch(req.configuration.GATE);
      return { raw: { before, after: await read() } };
    };`;
    const { api, app, tenant, reactorId } = await createReactor(svc, {
      formula: { name: "reader", code, configuration: [{ name: "GATE", type: "string" }] },
      permissions: ["token:create", "token:read", "token:use"],
      configuration: { GATE: `${receiver.url}/gate` },
    });
    const token = await api.post<{ id: string }>("/tokens", {
      key: app.key,
      body: { type: "token", data: "x" },
    });
    expect(token.status).toBe(201);

    const atGate = new Promise<void>((resolve) => {
      gateReached = resolve;
    });
    const running = api.post(`/reactors/${reactorId}/react`, {
      key: app.key,
      body: { args: { id: token.body.id } },
    });
    await atGate; // the run has read once and waits on its partner, however long that took
    expect((await api.delete(`/applications/${app.id}`, { key: tenant.managementKey })).status).toBe(204);
    expect((await api.get(`/tokens/${token.body.id}`, { key: app.key })).status).toBe(401);
    for (const go of gated.splice(0)) go();
    const res = await running;

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ raw: { before: 200, after: 403 } });
  });
});
