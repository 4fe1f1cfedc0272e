// @ts-check
/**
 * The sandbox process's lockdown, run first (child.mjs imports it before anything else): takes from `process` and
 * the global what code that escaped the vm context could misuse, turns off what would carry bytes from one run to
 * the next, and freezes the allowed modules (frozen, null-prototype copies) and what their instances share.
 * Exports what the rest of the process keeps: the IPC channel, the facades and the globals every context gets.
 */
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";

export const ALLOWED_MODULES = ["crypto", "util", "url", "querystring", "buffer", "string_decoder"];

// Keep what this file needs, then take away what code that escaped the context could misuse: signalling
// other processes (kill, _debugProcess opens a Node process's inspector), native bindings and built-in
// loading, and the network globals (Node 20-24's permission model does not cover the network).
export const proc = process;
const ipcSend = proc.send;
// Started by spawn.ts with an IPC channel, always: without one there is no host to answer.
if (ipcSend === undefined) throw new Error("the sandbox process needs its IPC channel");
/** Sends a message to the host (runner-protocol.ts). */
export const send = ipcSend.bind(proc);
for (const name of [
  "binding",
  "_linkedBinding",
  "dlopen",
  "getBuiltinModule",
  "kill",
  "_kill",
  "_debugProcess",
  "_debugEnd",
  "_startProfilerIdleNotifier",
  "_stopProfilerIdleNotifier",
  "chdir",
  "setuid",
  "setgid",
  "seteuid",
  "setegid",
  "setgroups",
  "initgroups",
  "openStdin",
]) {
  delete (/** @type {Record<string, unknown>} */ (/** @type {unknown} */ (proc))[name]);
}
proc.argv = [proc.argv[0] ?? "node"];
proc.execArgv = [];
for (const name of ["process", "fetch", "WebSocket", "EventSource", "Request", "Response", "Headers"]) {
  delete (/** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis))[name]);
}

// Nothing of one run may be readable by a later one (runs of one code by different callers share this
// process). Node's Buffer pool is one 8 KiB ArrayBuffer that every small `Buffer.from` and `allocUnsafe`
// slices, so `buffer.buffer` would hand a run every earlier run's bytes: size 0 turns pooling off (Node reads
// Buffer.poolSize at each allocation; lockdown freezes it), and `--zero-fill-buffers` (spawn.ts) makes every
// allocation fresh zeroed memory. The Blob URL registry (`URL.createObjectURL`) is one per process: withheld.
Buffer.poolSize = 0;
delete (/** @type {{ createObjectURL?: unknown }} */ (URL).createObjectURL);
delete (/** @type {{ revokeObjectURL?: unknown }} */ (URL).revokeObjectURL);
/** Process-wide settings a run can write but lockdown cannot freeze (a module's own variable behind a setter). */
export const DEFAULT_MAX_LISTENERS = EventEmitter.defaultMaxListeners;

/**
 * Makes a data property of a prototype an accessor before freezing it, so instances can still get their own
 * value by assignment (`this._events = ...`): without this, freezing EventEmitter.prototype would break Node.
 * @param {object} proto
 */
function tameOverrides(proto) {
  for (const key of Reflect.ownKeys(proto)) {
    const desc = Object.getOwnPropertyDescriptor(proto, key);
    if (desc === undefined || !("value" in desc) || !desc.writable || !desc.configurable) continue;
    const value = desc.value;
    const accessors = {
      get() {
        return value;
      },
      /** @param {unknown} next */
      set(next) {
        if (this === proto) throw new TypeError(`Cannot assign to read only property '${String(key)}'`);
        Object.defineProperty(this, key, {
          value: next,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      },
    };
    Object.freeze(accessors.get);
    Object.freeze(accessors.set);
    Object.defineProperty(proto, key, { ...accessors, enumerable: desc.enumerable, configurable: false });
  }
}

/**
 * Freezes everything reachable from `roots` (property values, accessors, what getters answer, and
 * prototypes): the allowed modules are objects of this realm shared by every run of the process, so none of
 * it may be changed by a run, neither to leave something for the next run nor to have this file's own code
 * (IPC runs on EventEmitter.prototype) call the code's functions.
 * @param {unknown[]} roots
 */
function lockdown(roots) {
  const seen = new Set();
  const prototypes = new Set();
  /** Prototypes of objects (not a class's static side): their getters expect an instance as receiver. */
  const instanceShapes = new Set();
  /** Seen, but whose getters were not asked yet. */
  let unasked = [];
  const stack = [...roots];
  while (stack.length > 0) {
    while (stack.length > 0) {
      const value = stack.pop();
      if ((typeof value !== "object" || value === null) && typeof value !== "function") continue;
      if (seen.has(value)) continue;
      seen.add(value);
      unasked.push(value);
      const proto = Object.getPrototypeOf(value);
      if (proto !== null) {
        prototypes.add(proto);
        if (typeof value !== "function") instanceShapes.add(proto);
        stack.push(proto);
      }
      for (const key of Reflect.ownKeys(value)) {
        const desc = Object.getOwnPropertyDescriptor(value, key);
        if (desc === undefined) continue;
        if ("value" in desc) {
          stack.push(desc.value);
          if (key === "prototype" && typeof value === "function") {
            prototypes.add(desc.value);
            instanceShapes.add(desc.value);
          }
        } else stack.push(desc.get, desc.set);
      }
    }
    // What a getter answers may be shared, mutable state too: `Buffer[Symbol.species]` is Node's FastBuffer
    // class, `crypto.subtle` one SubtleCrypto, `util.inspect.defaultOptions` the object `inspect` reads,
    // `Stream.promises` a module. Ask each getter of a value and of its prototypes, with the value as
    // receiver, as the code would; never with a prototype of instances as receiver (a lazy getter, such as
    // crypto's LazyTransform, would set up state on the prototype that every instance then shares).
    const asking = unasked;
    unasked = [];
    for (const value of asking) {
      if (instanceShapes.has(value)) continue;
      for (let holder = value; holder !== null; holder = Object.getPrototypeOf(holder)) {
        if (holder === Function.prototype || holder === Object.prototype) break; // only caller/arguments: they throw
        for (const key of Reflect.ownKeys(holder)) {
          const get = Object.getOwnPropertyDescriptor(holder, key)?.get;
          if (get === undefined) continue;
          try {
            stack.push(Reflect.apply(get, value, []));
          } catch {
            // a getter that refuses this receiver answers nothing to freeze
          }
        }
      }
    }
  }
  for (const value of seen) {
    if (Object.isFrozen(value) || ArrayBuffer.isView(value)) continue; // typed arrays cannot be frozen
    if (prototypes.has(value)) tameOverrides(value);
    Object.freeze(value);
  }
}

/** Left out of the copies: loading an OpenSSL engine is loading native code (the permission model refuses it too). */
const WITHHELD = new Set(["crypto.setEngine", "crypto.setFips", "buffer.resolveObjectURL"]);

/** Frozen, null-prototype copies of the allowed modules: the modules' own exports objects are never handed out. */
const nodeRequire = createRequire(import.meta.url);
/** @type {Map<string, Record<string, unknown>>} */
export const FACADES = new Map();
for (const name of ALLOWED_MODULES) {
  const exports = nodeRequire(`node:${name}`);
  const copy = Object.create(null);
  for (const key of Object.keys(exports)) if (!WITHHELD.has(`${name}.${key}`)) copy[key] = exports[key];
  FACADES.set(name, copy);
}

/**
 * Objects of this realm that a run reaches only through instances it makes, shared by every instance: the
 * prototypes of iterators, of native handles (crypto, Blob) and of stream state (with their module's own
 * functions, such as the `nop` a WritableState answers). One instance of each is made here so that lockdown
 * reaches and freezes what they share; the instances are then dropped. Errors thrown by Node are left out (a
 * class per error code): see docs/sandbox.md, "What is not blocked".
 */
async function sampleInstances() {
  const crypto = nodeRequire("node:crypto");
  const { Blob, File } = nodeRequire("node:buffer");
  const { MIMEType } = nodeRequire("node:util");
  const { StringDecoder } = nodeRequire("node:string_decoder");
  const key = Buffer.alloc(16);
  const samples = [
    // A CryptoKey, whose class Web Crypto does not hand out: made before this file answers "ready".
    await crypto.webcrypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
  ];
  const makers = [
    () => new URLSearchParams("a=1").entries(),
    () => new URL("http://h/?a=1"),
    () => new MIMEType("text/plain;a=b").params.entries(),
    () => new Blob(["a"]),
    () => new File(["a"], "a"),
    () => new StringDecoder("utf8"),
    () => new TextDecoder(),
    () => crypto.createHash("sha256"),
    () => crypto.createHmac("sha256", key),
    () => crypto.createCipheriv("aes-128-cbc", key, key),
    () => crypto.createDecipheriv("aes-128-cbc", key, key),
    () => crypto.createSign("sha256"),
    () => crypto.createVerify("sha256"),
    () => crypto.createSecretKey(key),
    () => crypto.createECDH("prime256v1"),
    () => crypto.createDiffieHellman(Buffer.from([23]), 2), // a tiny prime: a real group's check takes 70 ms
    () => crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }),
  ];
  for (const make of makers) {
    try {
      samples.push(make());
    } catch {
      // a class this Node build lacks: nothing of it to reach
    }
  }
  return samples;
}
lockdown([...FACADES.values(), ...(await sampleInstances())]);
/** The facade of an allowed module (of ALLOWED_MODULES only). @param {string} name */
export const facade = (name) => /** @type {Record<string, unknown>} */ (FACADES.get(name));

/** Globals of this realm every context gets (frozen, shared by the runs of one process). */
const buffer = facade("buffer");
const url = facade("url");
const util = facade("util");
export const GLOBALS = {
  Buffer: buffer.Buffer,
  atob: buffer.atob,
  btoa: buffer.btoa,
  URL: url.URL,
  URLSearchParams: url.URLSearchParams,
  TextEncoder: util.TextEncoder,
  TextDecoder: util.TextDecoder,
  // Web Crypto, as Node offers it globally (jose and uuid's browser builds use it).
  crypto: facade("crypto").webcrypto,
};
