// @ts-check
/**
 * The driver of a run: compiled once per process and evaluated first in every run's fresh context, with the
 * runtime's source (child-runtime.mjs). Like the runtime, it uses nothing from outside its own body.
 */
import vm from "node:vm";
import { codeRuntime } from "./child-runtime.mjs";

/**
 * The run's capabilities, the only object of the sandbox process's realm the driver gets (as
 * `globalThis.__sandboxHost`, taken off before the code runs): strings and numbers in, strings and numbers out.
 * Every argument is checked by the host, as the code may have got hold of it.
 * @typedef {object} SandboxHost
 * @property {null} __proto__
 * @property {Function} factory the code's module function: (exports, require, module)
 * @property {string} input JSON of `req` without `svc`
 * @property {boolean} parseArgsBody `req.args.body` is JSON text, parsed here (RunMessage.parseArgsBody)
 * @property {boolean} svc whether `req.svc` is a client
 * @property {string} allowed the names the code may require, for the error message
 * @property {string} errorsModule the errors module's name
 * @property {string} errorGlobals its classes offered as globals, comma-separated
 * @property {(name: unknown) => unknown} require an allowed module's facade, or undefined
 * @property {(name: unknown) => unknown} packageFactory a package's wrapper in this context, or undefined
 * @property {() => string} take JSON of the svc and fetch answers not yet taken: [call, ok, payload][]
 * @property {(op: unknown, args: unknown) => number} call asks the host for an svc call: its id, or -1
 * @property {(request: unknown) => number} fetch asks the host for a fetch: its id, or -1
 * @property {(call: unknown) => void} cancelFetch
 * @property {(kind: unknown, ms: unknown) => number} timer starts a timer: its id, or -1
 * @property {(timer: unknown) => void} clearTimer
 * @property {() => string} fired JSON of the ids of timers that fired and were not taken yet
 * @property {(kind: unknown, payload: unknown) => void} done ends the run
 */

/**
 * A value the code made, threw or handed over: anything at all (its own classes, proxies, getters that throw).
 * `any` because the driver reads such values only behind checks of what they are, as JavaScript lets it.
 * @typedef {any} CodeValue
 * @typedef {(ok: boolean, payload: string | undefined) => void} Settle
 * @typedef {typeof globalThis & { __sandboxHost?: SandboxHost }} DriverGlobal
 */

/**
 * Runs first in every fresh context, compiled once (in strict mode) and evaluated as `(driver)()`. It takes the host
 * capabilities off the global before any code of the run can look, builds `module`, `require` and
 * `req.svc`, calls the code and reports through `host.done`. It hands the host only strings and numbers,
 * and never passes a host object to anything the code could have replaced.
 * @param {typeof import("./child-runtime.mjs").codeRuntime} codeRuntime
 */
export function driver(codeRuntime) {
  const host = /** @type {SandboxHost} */ (/** @type {DriverGlobal} */ (globalThis).__sandboxHost);
  delete (/** @type {DriverGlobal} */ (globalThis).__sandboxHost);
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  /** Host calls in flight (svc and fetch, one numbering): id → settle(ok, payload). @type {Map<number, Settle>} */
  const calls = new Map();
  let finished = false;

  /** @param {string} kind @param {string | undefined} payload */
  const finish = (kind, payload) => {
    if (finished) return;
    finished = true;
    host.done(kind, payload);
  };
  /** @param {string} kind @param {CodeValue} error */
  const fail = (kind, error) => {
    /** @type {import("./runner-protocol.ts").ThrownInfo} */
    let info;
    try {
      if (error !== null && (typeof error === "object" || typeof error === "function")) {
        info = {
          name: typeof error.name === "string" ? error.name : "Error",
          message: typeof error.message === "string" ? error.message : "",
        };
        if (typeof error.status === "number" && Number.isInteger(error.status)) info.status = error.status;
        if (error.body !== undefined) {
          try {
            info.body = parse(stringify(error.body));
          } catch {
            // a body that is not JSON-able is left out
          }
        }
        // CustomHttpResponseError's headers: JSON-able, or left out (the host filters them: run-error.ts).
        if (error.headers !== null && typeof error.headers === "object") {
          try {
            info.headers = parse(stringify(error.headers));
          } catch {
            // left out, as a body
          }
        }
        // The typed errors' field messages (reactor-errors.cjs): a map of string lists.
        if (error.errors !== null && typeof error.errors === "object") {
          try {
            info.errors = parse(stringify(error.errors));
          } catch {
            // left out, as a body
          }
        }
      } else {
        info = { name: "Error", message: String(error) };
      }
    } catch {
      info = { name: "Error", message: "the code threw a value that cannot be read" };
    }
    let json;
    try {
      json = stringify(info);
    } catch {
      json = '{"name":"Error","message":""}';
    }
    finish(kind, json);
  };

  /** @param {string} op @param {CodeValue[]} args @returns {Promise<unknown>} */
  const call = (op, args) =>
    new Promise((resolve, reject) => {
      let json;
      try {
        json = stringify(args);
      } catch (error) {
        reject(error);
        return;
      }
      const id = host.call(op, json);
      if (typeof id !== "number" || id < 1) {
        reject(new Error(`svc.${op} was refused: the run has ended, or its arguments are too large`));
        return;
      }
      calls.set(id, (ok, payload) => {
        if (ok) {
          resolve(payload === undefined || payload === null ? undefined : parse(payload));
          return;
        }
        const info = parse(/** @type {string} */ (payload)); // a failure always carries its JSON
        const error = /** @type {Error & { status?: unknown, body?: unknown }} */ (new Error(info.message));
        error.name = "SvcError";
        if (info.status !== undefined) error.status = info.status;
        if (info.body !== undefined) error.body = info.body;
        reject(error);
      });
    });
  const freeze = Object.freeze;
  const svc = host.svc
    ? freeze({
        tokens: freeze({
          create: (/** @type {CodeValue} */ body) => call("tokens.create", [body]),
          retrieve: (/** @type {CodeValue} */ id) => call("tokens.retrieve", [id]),
          update: (/** @type {CodeValue} */ id, /** @type {CodeValue} */ patch) =>
            call("tokens.update", [id, patch]),
          delete: (/** @type {CodeValue} */ id) => call("tokens.delete", [id]),
        }),
      })
    : null;

  /** Settles host call `id` with the host's answer (primitives only). */
  /** @param {number} id @param {boolean} ok @param {string | undefined} payload */
  const deliver = (id, ok, payload) => {
    const settle = calls.get(id);
    if (settle === undefined) return;
    calls.delete(id);
    settle(ok, payload);
  };

  // Timers, fetch and their classes: globals the code may replace in its own context, like any other.
  const runtime = codeRuntime(host, calls, (error) => fail("thrown", error));
  for (const name of Object.keys(runtime.globals))
    Object.defineProperty(globalThis, name, {
      value: runtime.globals[name],
      writable: true,
      configurable: true,
      enumerable: false,
    });

  // The host enters the context only through scripts with a timeout: answers and fired timers wait in the
  // host until the pump (which the code can neither replace nor remove) takes them, within the run's time.
  Object.defineProperty(globalThis, "__sandboxPump", {
    value: () => {
      const answers = parse(host.take());
      for (let i = 0; i < answers.length; i++) deliver(answers[i][0], answers[i][1], answers[i][2]);
      runtime.fired(parse(host.fired()));
    },
  });

  const allowed = host.allowed;
  /** Packages this run has required: name → its module (evaluated at most once per run). */
  /** @type {Record<string, { exports: CodeValue }>} */
  const packages = Object.create(null);
  /** @param {CodeValue} name @returns {CodeValue} */
  const require = (name) => {
    const key = typeof name === "string" && name.startsWith("node:") ? name.slice(5) : name;
    if (key === "node-fetch") return runtime.nodeFetch;
    const found = typeof key === "string" ? host.require(key) : undefined;
    if (found !== undefined) return found;
    if (typeof key === "string" && Object.hasOwn(packages, key))
      return /** @type {{ exports: CodeValue }} */ (packages[key]).exports;
    const factory = typeof key === "string" ? host.packageFactory(key) : undefined;
    if (typeof factory !== "function")
      throw new Error(`Cannot require '${String(name)}': the code may require only ${allowed}`);
    const loaded = { exports: {} };
    packages[key] = loaded; // before it runs: a package that requires itself (a cycle) gets what it has so far
    try {
      factory.call(loaded.exports, loaded.exports, require, loaded, globalThis);
    } catch (error) {
      delete packages[key];
      throw error;
    }
    return loaded.exports;
  };

  // Node's global structuredClone for values of this context (Node's own would answer objects of the host's
  // realm): plain data, Date, RegExp, Map, Set, ArrayBuffer and typed arrays, cycles kept; jose uses it.
  /** @param {CodeValue} value */
  const structuredClone = (value) => {
    const copies = new Map();
    /** @param {CodeValue} v @returns {CodeValue} */
    const copy = (v) => {
      if (v === null || (typeof v !== "object" && typeof v !== "function")) return v;
      if (typeof v === "function" || typeof v === "symbol") throw new TypeError("value could not be cloned");
      if (copies.has(v)) return copies.get(v);
      /** @type {CodeValue} */
      let out;
      if (v instanceof Date) out = new Date(v.getTime());
      else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
      else if (v instanceof ArrayBuffer) out = v.slice(0);
      else if (ArrayBuffer.isView(v)) {
        const view = /** @type {CodeValue} */ (v); // a typed array or DataView, of whichever class
        out = new view.constructor(view.buffer.slice(0), view.byteOffset, view.length);
      } else if (v instanceof Map) {
        out = new Map();
        copies.set(v, out);
        for (const [k, item] of v) out.set(copy(k), copy(item));
        return out;
      } else if (v instanceof Set) {
        out = new Set();
        copies.set(v, out);
        for (const item of v) out.add(copy(item));
        return out;
      } else {
        out = Array.isArray(v) ? [] : {};
        copies.set(v, out);
        for (const key of Object.keys(v)) out[key] = copy(v[key]);
        return out;
      }
      copies.set(v, out);
      return out;
    };
    return copy(value);
  };
  Object.defineProperty(globalThis, "structuredClone", {
    value: structuredClone,
    writable: true,
    configurable: true,
  });

  // A TextEncoder whose arrays are this context's Uint8Arrays (the host's answers arrays of its own realm, which
  // fail `instanceof Uint8Array` here: jose refuses such a key).
  const HostTextEncoder = globalThis.TextEncoder;
  const ContextUint8Array = Uint8Array;
  class TextEncoder {
    #encoder = new HostTextEncoder();
    get encoding() {
      return "utf-8";
    }
    encode(input = "") {
      return new ContextUint8Array(this.#encoder.encode(input));
    }
    /** @param {string} input @param {Uint8Array} destination */
    encodeInto(input, destination) {
      const { read, written } = this.#encoder.encodeInto(input, destination);
      return { read, written };
    }
  }
  Object.defineProperty(globalThis, "TextEncoder", {
    value: TextEncoder,
    writable: true,
    configurable: true,
  });

  // The typed errors as globals, made on first use: code that declares its own (`const { BadRequestError } =
  // require(...)`) shadows them, where a declaration in the code's scope would collide.
  // Indexed loops, not for-of: the code may have replaced its realm's array iterator by the time they run.
  const errorNames = /** @type {string[]} */ (host.errorGlobals.split(","));
  /** @param {number} i */
  const errorName = (i) => /** @type {string} */ (errorNames[i]);
  /** @param {string} name @param {unknown} value */
  const defineGlobal = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  const installErrors = () => {
    const errors = require(host.errorsModule);
    for (let i = 0; i < errorNames.length; i++) defineGlobal(errorName(i), errors[errorName(i)]);
  };
  for (let i = 0; i < errorNames.length; i++) {
    const name = errorName(i);
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get() {
        installErrors();
        return /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis))[name];
      },
      set(value) {
        installErrors();
        defineGlobal(name, value);
      },
    });
  }
  const module = { exports: {} };
  try {
    host.factory.call(module.exports, module.exports, require, module);
  } catch (error) {
    fail("invalid-code", error);
    return;
  }
  const fn = module.exports;
  if (typeof fn !== "function") {
    finish("invalid-code", stringify({ name: "TypeError", message: "module.exports must be a function" }));
    return;
  }
  const req = parse(host.input);
  // A destination's answer, parsed here in the run's time, not on the process every tenant shares; kept as the
  // text it is when it is not JSON.
  if (host.parseArgsBody && typeof req?.args?.body === "string") {
    try {
      req.args.body = parse(req.args.body);
    } catch {}
  }
  if (req !== null && typeof req === "object" && !Array.isArray(req)) req.svc = svc;
  let out;
  try {
    out = fn(req);
  } catch (error) {
    fail("thrown", error);
    return;
  }
  Promise.resolve(out).then(
    (value) => {
      let json;
      try {
        json = stringify(value);
      } catch (error) {
        fail("thrown", error);
        return;
      }
      finish("ok", json);
    },
    (error) => fail("thrown", error),
  );
}
// Strict, so that stack frames of the driver give the code neither its function nor its receiver.
export const DRIVER = new vm.Script(`"use strict"; (${driver.toString()})(${codeRuntime.toString()})`, {
  filename: "sandbox-driver.js",
});
