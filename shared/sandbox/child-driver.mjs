// @ts-check
/**
 * The driver of a run: compiled once per process and evaluated first in every run's fresh context, with the
 * runtime's source (child-runtime.mjs). Like the runtime, it uses nothing from outside its own body.
 */
import vm from "node:vm";
import { codeRuntime } from "./child-runtime.mjs";

/**
 * Runs first in every fresh context, compiled once (in strict mode) and evaluated as `(driver)()`. It takes the host
 * capabilities off the global before any code of the run can look, builds `module`, `require` and
 * `req.svc`, calls the code and reports through `host.done`. It hands the host only strings and numbers,
 * and never passes a host object to anything the code could have replaced.
 */
export function driver(codeRuntime) {
  const host = globalThis.__sandboxHost;
  delete globalThis.__sandboxHost;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  /** Host calls in flight (svc and fetch, one numbering): id → settle(ok, payload). */
  const calls = new Map();
  let finished = false;

  const finish = (kind, payload) => {
    if (finished) return;
    finished = true;
    host.done(kind, payload);
  };
  const fail = (kind, error) => {
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
        const info = parse(payload);
        const error = new Error(info.message);
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
          create: (body) => call("tokens.create", [body]),
          retrieve: (id) => call("tokens.retrieve", [id]),
          update: (id, patch) => call("tokens.update", [id, patch]),
          delete: (id) => call("tokens.delete", [id]),
        }),
      })
    : null;

  /** Settles host call `id` with the host's answer (primitives only). */
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
  const packages = Object.create(null);
  const require = (name) => {
    const key = typeof name === "string" && name.startsWith("node:") ? name.slice(5) : name;
    if (key === "node-fetch") return runtime.nodeFetch;
    const found = typeof key === "string" ? host.require(key) : undefined;
    if (found !== undefined) return found;
    if (typeof key === "string" && Object.hasOwn(packages, key)) return packages[key].exports;
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
  const structuredClone = (value) => {
    const copies = new Map();
    const copy = (v) => {
      if (v === null || (typeof v !== "object" && typeof v !== "function")) return v;
      if (typeof v === "function" || typeof v === "symbol") throw new TypeError("value could not be cloned");
      if (copies.has(v)) return copies.get(v);
      let out;
      if (v instanceof Date) out = new Date(v.getTime());
      else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
      else if (v instanceof ArrayBuffer) out = v.slice(0);
      else if (ArrayBuffer.isView(v)) out = new v.constructor(v.buffer.slice(0), v.byteOffset, v.length);
      else if (v instanceof Map) {
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
  const errorNames = host.errorGlobals.split(",");
  const defineGlobal = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  const installErrors = () => {
    const errors = require(host.errorsModule);
    for (let i = 0; i < errorNames.length; i++) defineGlobal(errorNames[i], errors[errorNames[i]]);
  };
  for (let i = 0; i < errorNames.length; i++) {
    const name = errorNames[i];
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get() {
        installErrors();
        return globalThis[name];
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
