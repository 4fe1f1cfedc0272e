/**
 * Attack: two callers react with the same reactor (or call the same proxy with a request transform), so their
 * runs share one sandbox process (one per tenant and code). The first caller's run handles a card number; the second caller's run of the same code looks
 * for anything the first left behind: Node's Buffer pool (`Buffer.allocUnsafe(…).buffer` was the whole 8 KiB
 * pool, earlier runs' bytes included), uninitialised memory, globals, prototypes of built-ins, the required
 * modules (built-in and packaged), shared objects Node's getters answer (`Buffer[Symbol.species]`,
 * `crypto.subtle`, `util.inspect.defaultOptions`) or instances lead to (an iterator's prototype, a native
 * handle's), a module's setter (`EventEmitter.defaultMaxListeners`), the
 * Blob URL registry and timers. It must find nothing.
 */
import { describe, expect, it } from "vitest";
import { bodyText, client, createTenant } from "#test/support/http.ts";
import { useLocalServer } from "#test/support/local-server.ts";
import { createReactor } from "#test/support/reactors.ts";
import { useService } from "#test/support/service.ts";
import { appKey, type TokenBody, VISA } from "#test/support/tokens.ts";
import { pidOf } from "./sandbox-tenant.ts";

const svc = useService({ allowPrivateDestinations: true });

/** The proxy's destination: answers the JSON body it received. */
const destination = useLocalServer((_req, res, body) => {
  res.writeHead(200, { "content-type": "application/json" }).end(body.length > 0 ? body : "{}");
});

/**
 * `residue(secret)`: with a card number, leaves it everywhere it can and answers "planted"; without, looks
 * everywhere and answers where it found one. The start of a module; each test adds its `module.exports`.
 */
const RESIDUE = `
const util = require("util");
const crypto = require("crypto");
const buffer = require("buffer");
const errors = require("@basis-theory/basis-theory-reactor-formulas-sdk-js");
const EventEmitter = Object.getPrototypeOf(Object.getPrototypeOf(crypto.Hash.prototype)).constructor;
const attempt = (fn) => { try { return fn(); } catch { return undefined; } };
/** Shared objects reached only through instances: an iterator's prototype, a native handle's prototype. */
const iteratorShape = () => Object.getPrototypeOf(new URLSearchParams("a=1").entries());
const handleShape = () => {
  const hash = crypto.createHash("sha256");
  const handle = Object.getOwnPropertySymbols(hash).find((symbol) => String(symbol) === "Symbol(kHandle)");
  return Object.getPrototypeOf(hash[handle]);
};

async function residue(secret) {
  if (secret) {
    // An innocent transform's byte handling: each of these went through the process's Buffer pool.
    Buffer.from(secret);
    Buffer.from(JSON.stringify({ number: secret }));
    Buffer.from(Buffer.from(secret).toString("base64"), "base64");
    Buffer.allocUnsafe(64).write(secret);
    crypto.createHash("sha256").update(secret).digest("hex");
    // Deliberate leftovers.
    globalThis.leftover = secret;
    Object.prototype.leftover = secret;
    Array.prototype.leftover = secret;
    String.prototype.leftover = secret;
    require.cache = { leftover: secret };
    attempt(() => { errors.leftover = secret; errors.BadRequestError.leftover = secret; });
    attempt(() => { util.leftover = secret; });
    attempt(() => { Buffer.leftover = secret; });
    attempt(() => { Buffer[Symbol.species].leftover = secret; });
    attempt(() => { crypto.subtle.leftover = secret; });
    attempt(() => { iteratorShape().leftover = secret; });
    attempt(() => { handleShape().leftover = secret; });
    attempt(() => { util.inspect.defaultOptions = { maxStringLength: Number(secret) }; });
    attempt(() => { EventEmitter.defaultMaxListeners = Number(secret); });
    attempt(() => URL.createObjectURL(new buffer.Blob([secret])));
    setInterval(() => { Buffer.from(secret); globalThis.late = secret; }, 5);
    return "planted";
  }

  const found = [];
  const look = (where, value) => {
    const text = attempt(() => (typeof value === "string" ? value : JSON.stringify(value))) ?? String(value);
    if (text.includes("4242") || text.includes("NDI0Mj")) found.push(where);
  };
  const bytes = (view) => Buffer.from(new Uint8Array(view.buffer)).toString("latin1");
  await new Promise((resolve) => setTimeout(resolve, 50)); // the first run's interval, were it still alive
  look("Buffer.allocUnsafe pool", bytes(Buffer.allocUnsafe(1)));
  look("Buffer.from pool", bytes(Buffer.from("x")));
  look("Buffer.allocUnsafe", Buffer.allocUnsafe(4000).toString("latin1"));
  look("Buffer.allocUnsafeSlow", Buffer.allocUnsafeSlow(1 << 20).toString("latin1"));
  look("globals", Object.getOwnPropertyNames(globalThis).map((name) => attempt(() => String(globalThis[name]))));
  look("prototypes", [({}).leftover, [].leftover, "".leftover]);
  look("require", [require.cache, errors.leftover, errors.BadRequestError.leftover, util.leftover]);
  look("Buffer", [Buffer.leftover, Buffer[Symbol.species].leftover]);
  look("crypto.subtle", crypto.subtle.leftover);
  look("instances' prototypes", [iteratorShape().leftover, handleShape().leftover]);
  look("util.inspect.defaultOptions", String(util.inspect.defaultOptions.maxStringLength));
  look("EventEmitter.defaultMaxListeners", String(EventEmitter.defaultMaxListeners));
  // Blob URLs live in one registry per process; a later run holding the id would read the blob.
  if (typeof URL.createObjectURL === "function") found.push("Blob URL registry");
  look("timers", globalThis.late);
  return found;
}`;
const REACTOR = `${RESIDUE}
module.exports = async (req) => ({ raw: await residue(req.args.card?.number) });`;
const TRANSFORM = `${RESIDUE}
module.exports = async (req) => ({ body: { result: await residue(req.args.body.number) }, headers: req.args.headers });`;

describe("attack: reading an earlier caller's data left in a shared sandbox process", () => {
  it("a second caller's run of the same code finds nothing of the first caller's run", async () => {
    const { api, tenant, reactorId } = await createReactor(svc, {
      formula: {
        name: "residue",
        code: REACTOR,
        request_parameters: [{ name: "card.number", type: "string", optional: true }],
      },
      permissions: ["token:use"],
    });
    const callerA = await appKey(api, tenant.managementKey, {
      type: "private",
      permissions: ["token:create", "token:use"],
    });
    const callerB = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:use"] });
    const card = await api.post<TokenBody>("/tokens", {
      key: callerA,
      body: { type: "card", data: { number: VISA, expiration_month: 7, expiration_year: 2031 } },
    });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    const react = (key: string, args: unknown) =>
      api.post<{ raw?: unknown }>(`/reactors/${reactorId}/react`, { key, body: { args } });

    const first = await react(callerA, { card: `{{ ${card.body.id} }}` });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.raw).toBe("planted");
    const pid = pidOf(svc, tenant.tenantId, REACTOR);
    expect(pid).toBeTypeOf("number");

    const second = await react(callerB, {});

    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(pidOf(svc, tenant.tenantId, REACTOR)).toBe(pid); // the very process the first run used
    expect(second.body.raw).toEqual([]);
    expect(bodyText(second.body)).not.toContain(VISA);
  });

  it("the same through a proxy's request transform, called by two applications", async () => {
    const api = client(svc.url);
    const tenant = await createTenant(api, svc.rootKey);
    const proxyApp = await api.post<{ id: string }>("/applications", {
      key: tenant.managementKey,
      body: { name: "proxy app", type: "private", permissions: ["token:use"] },
    });
    const proxy = await api.post<{ key: string }>("/proxies", {
      key: tenant.managementKey,
      body: {
        name: "residue",
        destination_url: destination.url,
        application: { id: proxyApp.body.id },
        request_transform: { code: TRANSFORM },
      },
    });
    expect(proxy.status, JSON.stringify(proxy.body)).toBe(201);
    const callerA = await appKey(api, tenant.managementKey, {
      type: "private",
      permissions: ["token:create", "token:use"],
    });
    const callerB = await appKey(api, tenant.managementKey, { type: "private", permissions: ["token:use"] });
    const token = await api.post<TokenBody>("/tokens", {
      key: callerA,
      body: { type: "card_number", data: VISA },
    });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    const call = (key: string, body: unknown) =>
      api.post<{ result?: unknown }>("/proxy/charge", {
        key,
        headers: { "svc-proxy-key": proxy.body.key },
        body,
      });

    const first = await call(callerA, { number: `{{ ${token.body.id} }}` });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.result).toBe("planted");
    const pid = pidOf(svc, tenant.tenantId, TRANSFORM);
    expect(pid).toBeTypeOf("number");

    const second = await call(callerB, {});

    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(pidOf(svc, tenant.tenantId, TRANSFORM)).toBe(pid);
    expect(second.body.result).toEqual([]);
    expect(bodyText(second.body)).not.toContain(VISA);
  });
});
