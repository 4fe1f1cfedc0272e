/**
 * One sandbox process, started by sandbox-process.ts for ONE (tenant, code) key, under Node's permission model
 * (it may read this file and nothing else; no writes, child processes, workers, addons, inspector), with an
 * empty environment, code generation from strings disabled and frozen intrinsics.
 *
 * Plain JavaScript with only built-in imports: it starts without a loader and is copied next to a bundle as
 * is. Messages are described in runner-protocol.ts.
 *
 * Each run gets a NEW vm context: the input is parsed and the result serialised inside it, and the only
 * objects of this realm it can reach are frozen built-ins (the allowed modules and a few globals), and there is
 * no Buffer pool: nothing a run leaves behind is readable by a later run (of another caller). Timers,
 * `fetch` and their classes are built inside the context (codeRuntime); `fetch` asks the host, which carries
 * the request out: this process has no network.
 */
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const ALLOWED_MODULES = ["crypto", "util", "url", "querystring", "buffer", "string_decoder"];
const SVC_OPERATIONS = ["tokens.create", "tokens.retrieve", "tokens.update", "tokens.delete"];

// Keep what this file needs, then take away what code that escaped the context could misuse: signalling
// other processes (kill, _debugProcess opens a Node process's inspector), native bindings and built-in
// loading, and the network globals (Node 20-24's permission model does not cover the network).
const proc = process;
const send = proc.send.bind(proc);
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
  delete proc[name];
}
proc.argv = [proc.argv[0] ?? "node"];
proc.execArgv = [];
for (const name of ["process", "fetch", "WebSocket", "EventSource", "Request", "Response", "Headers"]) {
  delete globalThis[name];
}

// Nothing of one run may be readable by a later one (runs of one code by different callers share this
// process). Node's Buffer pool is one 8 KiB ArrayBuffer that every small `Buffer.from` and `allocUnsafe`
// slices, so `buffer.buffer` would hand a run every earlier run's bytes: size 0 turns pooling off (Node reads
// Buffer.poolSize at each allocation; lockdown freezes it), and `--zero-fill-buffers` (spawn.ts) makes every
// allocation fresh zeroed memory. The Blob URL registry (`URL.createObjectURL`) is one per process: withheld.
Buffer.poolSize = 0;
delete URL.createObjectURL;
delete URL.revokeObjectURL;
/** Process-wide settings a run can write but lockdown cannot freeze (a module's own variable behind a setter). */
const DEFAULT_MAX_LISTENERS = EventEmitter.defaultMaxListeners;

/**
 * Makes a data property of a prototype an accessor before freezing it, so instances can still get their own
 * value by assignment (`this._events = ...`): without this, freezing EventEmitter.prototype would break Node.
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
const FACADES = new Map();
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
const facade = (name) => FACADES.get(name);

/** Globals of this realm every context gets (frozen, shared by the runs of one process). */
const buffer = facade("buffer");
const url = facade("url");
const util = facade("util");
const GLOBALS = {
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

/**
 * Packages the code may require besides the built-in facades (docs/sandbox.md, "Packages"): files in
 * `sandbox-packages/` next to this file (the host lets this process read exactly those). Each is compiled once
 * per process and evaluated inside the context of every run that requires it, so a package's state (axios
 * defaults, a yup locale) is the run's own and no run can change what another run gets.
 */
const PACKAGES_URL = new URL("./sandbox-packages/", import.meta.url);
const ERRORS_MODULE = "@basis-theory/basis-theory-reactor-formulas-sdk-js";
const PACKAGE_FILES = new Map([[ERRORS_MODULE, new URL("reactor-errors.cjs", PACKAGES_URL)]]);
try {
  const manifest = JSON.parse(readFileSync(new URL("built/manifest.json", PACKAGES_URL), "utf8"));
  for (const [name, file] of Object.entries(manifest.packages ?? {}))
    if (typeof file === "string" && /^[\w.-]+\.js$/.test(file))
      PACKAGE_FILES.set(name, new URL(`built/${file}`, PACKAGES_URL));
} catch {
  // Nothing built (a checkout before `npm run build:sandbox-packages`): the facades and the errors module only.
}
/** The errors module's classes, also offered as globals (defined on first use, shadowed by the code's own names). */
const ERROR_GLOBALS = [
  "BasisTheoryReactorError",
  "AuthenticationError",
  "AuthorizationError",
  "BadRequestError",
  "CustomHttpResponseError",
  "InvalidPaymentMethodError",
  "InvalidReactorConfigurationError",
  "PaymentRequiredError",
  "RateLimitError",
  "ReactorRuntimeError",
  "ServiceUnavailableError",
];
const REQUIRABLE = [...ALLOWED_MODULES, "node-fetch", ...PACKAGE_FILES.keys()].join(", ");
/** Compiled packages by name: { script } or { error } (a file that cannot be read or compiled). */
const packageScripts = new Map();
function packageScript(name) {
  let entry = packageScripts.get(name);
  if (entry === undefined) {
    try {
      const source = readFileSync(PACKAGE_FILES.get(name), "utf8");
      // `self`: browser builds find the global object by that name (node-forge).
      const wrapped = `(function (exports, require, module, self) {${source}\n})`;
      entry = { script: new vm.Script(wrapped, { filename: `sandbox-packages/${name}` }) };
    } catch {
      entry = { error: true };
    }
    packageScripts.set(name, entry);
  }
  return entry.script;
}
/**
 * Package names the code requires by a string literal, and the errors module when the code names one of its
 * classes: their wrappers are made before each run starts (the others only if the code asks at run time).
 */
function packagesNamedIn(code) {
  const names = new Set();
  if (ERROR_GLOBALS.some((name) => code.includes(name))) names.add(ERRORS_MODULE);
  for (const match of code.matchAll(/\brequire\s*\(\s*(["'`])([^"'`]+)\1\s*\)/g)) {
    const name = match[2].startsWith("node:") ? match[2].slice(5) : match[2];
    if (PACKAGE_FILES.has(name)) names.add(name);
  }
  return [...names];
}
/** This file's directory: left out of every message sent back (a run's errors may quote it). */
const HOST_DIR = fileURLToPath(new URL(".", import.meta.url));
const withoutHostPaths = (text) => (HOST_DIR.length > 1 ? text.split(HOST_DIR).join("") : text);

const CONTEXT_OPTIONS = {
  name: "transform",
  codeGeneration: { strings: false, wasm: false },
  microtaskMode: "afterEvaluate",
};

/**
 * What a run's code gets on top of the JavaScript built-ins: timers, `fetch` (carried out by the host) and
 * the WHATWG classes around it. Evaluated inside each run's context by the driver (so every class and
 * promise is of that context's realm), never in this file's realm. `host` is the run's capability object;
 * `calls` maps the ids of host calls in flight to their `settle(ok, payload)` (the driver's pump delivers the
 * answers); `fail` ends the run as `thrown` (an error thrown by a timer callback, as Node would crash on it).
 */
function codeRuntime(host, calls, fail) {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const ownKeys = Object.keys;
  const isView = ArrayBuffer.isView;
  const tag = (value) => Object.prototype.toString.call(value);
  const Bytes = Buffer; // this process's frozen Buffer, also a global of the context

  // --- timers: the host's real timers, cancelled when the run ends; callbacks run inside the context ---
  const timers = new Map();
  const TIMER_ID = Symbol("timer id");
  class Timeout {
    constructor(id) {
      this[TIMER_ID] = id;
    }
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    hasRef() {
      return true;
    }
    close() {
      clear(this);
      return this;
    }
    [Symbol.toPrimitive]() {
      return this[TIMER_ID];
    }
  }
  const schedule = (kind, callback, delay, args) => {
    if (typeof callback !== "function")
      throw new TypeError('The "callback" argument must be of type function');
    let ms = Number(delay);
    if (!(ms >= 1 && ms <= 2147483647)) ms = kind === "immediate" ? 0 : 1; // Node's rule: out of range is 1
    const id = host.timer(kind, Math.floor(ms));
    if (typeof id !== "number" || id < 1) throw new Error("the run has ended, or schedules too many timers");
    timers.set(id, { callback, args, repeat: kind === "interval" });
    return new Timeout(id);
  };
  const clear = (handle) => {
    const id = handle instanceof Timeout ? handle[TIMER_ID] : Number(handle);
    if (!timers.has(id)) return;
    timers.delete(id);
    host.clearTimer(id);
  };
  /** Runs the callbacks of timers the host saw fire, in order. */
  const fired = (ids) => {
    for (let i = 0; i < ids.length; i++) {
      const timer = timers.get(ids[i]);
      if (timer === undefined) continue;
      if (!timer.repeat) timers.delete(ids[i]);
      try {
        timer.callback(...timer.args);
      } catch (error) {
        fail(error);
        return;
      }
    }
  };
  const queued = Promise.resolve();
  const globals = {
    setTimeout: (callback, delay, ...args) => schedule("timeout", callback, delay, args),
    setInterval: (callback, delay, ...args) => schedule("interval", callback, delay, args),
    setImmediate: (callback, ...args) => schedule("immediate", callback, 0, args),
    clearTimeout: clear,
    clearInterval: clear,
    clearImmediate: clear,
    queueMicrotask: (callback) => {
      if (typeof callback !== "function")
        throw new TypeError('The "callback" argument must be of type function');
      queued.then(() => callback()).catch(fail);
    },
  };

  // --- AbortController, enough for fetch and timeouts ---
  class AbortSignal {
    #listeners = [];
    aborted = false;
    reason = undefined;
    onabort = null;
    addEventListener(type, listener) {
      if (type === "abort" && typeof listener === "function") this.#listeners.push(listener);
    }
    removeEventListener(_type, listener) {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    }
    throwIfAborted() {
      if (this.aborted) throw this.reason;
    }
    static abort(reason) {
      const controller = new AbortController();
      controller.abort(reason);
      return controller.signal;
    }
    static timeout(ms) {
      const controller = new AbortController();
      globals.setTimeout(
        () => controller.abort(domError("The operation was aborted due to timeout", "TimeoutError")),
        ms,
      );
      return controller.signal;
    }
    _abort(reason) {
      if (this.aborted) return;
      this.aborted = true;
      this.reason = reason;
      const event = { type: "abort", target: this };
      if (typeof this.onabort === "function") this.onabort(event);
      for (const listener of this.#listeners.splice(0)) listener(event);
    }
  }
  class AbortController {
    signal = new AbortSignal();
    abort(reason) {
      this.signal._abort(
        reason === undefined ? domError("This operation was aborted", "AbortError") : reason,
      );
    }
  }
  const domError = (message, name) => {
    const error = new Error(message);
    error.name = name;
    return error;
  };

  // --- fetch and its classes (node-fetch's names and shapes) ---
  class FetchError extends TypeError {
    constructor(message, type, systemError) {
      super(message);
      this.name = "FetchError";
      this.type = type;
      if (systemError?.code !== undefined) this.code = this.errno = systemError.code;
    }
  }
  class AbortError extends Error {
    constructor(message = "The operation was aborted.", type = "aborted") {
      super(message);
      this.name = "AbortError";
      this.type = type;
    }
  }
  const headerName = (name) => {
    const text = String(name).toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(text))
      throw new TypeError(`Header name must be a valid HTTP token [${name}]`);
    return text;
  };
  const headerValue = (value) => {
    const text = String(value).trim();
    if (/[\r\n\0]/.test(text)) throw new TypeError("Invalid character in header content");
    return text;
  };
  class Headers {
    #map = new Map(); // lower-cased name → values
    constructor(init) {
      if (init === undefined || init === null) return;
      if (init instanceof Headers) {
        for (const [name, value] of init.#pairs()) this.append(name, value);
      } else if (typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const [name, value, ...rest] = pair;
          if (rest.length > 0 || value === undefined)
            throw new TypeError("Each header pair must be [name, value]");
          this.append(name, value);
        }
      } else if (typeof init === "object") {
        for (const name of ownKeys(init)) this.append(name, init[name]);
      } else throw new TypeError("Headers init must be an object or an iterable");
    }
    append(name, value) {
      const key = headerName(name);
      const values = this.#map.get(key);
      if (values) values.push(headerValue(value));
      else this.#map.set(key, [headerValue(value)]);
    }
    set(name, value) {
      this.#map.set(headerName(name), [headerValue(value)]);
    }
    get(name) {
      const values = this.#map.get(headerName(name));
      return values === undefined ? null : values.join(", ");
    }
    getSetCookie() {
      return [...(this.#map.get("set-cookie") ?? [])];
    }
    has(name) {
      return this.#map.has(headerName(name));
    }
    delete(name) {
      this.#map.delete(headerName(name));
    }
    forEach(callback, thisArg) {
      for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
    }
    *entries() {
      for (const name of [...this.#map.keys()].sort()) yield [name, this.get(name)];
    }
    *keys() {
      for (const [name] of this.entries()) yield name;
    }
    *values() {
      for (const [, value] of this.entries()) yield value;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    /** node-fetch v2: every value of every header. */
    raw() {
      const raw = {};
      for (const [name, values] of this.#map) raw[name] = [...values];
      return raw;
    }
    #pairs() {
      const pairs = [];
      for (const [name, values] of this.#map) for (const value of values) pairs.push([name, value]);
      return pairs;
    }
    static pairsOf(headers) {
      return headers.#pairs();
    }
  }
  /** Bytes of a request or response body, and the content type it implies. */
  const bodyBytes = (body) => {
    if (body === undefined || body === null) return { bytes: undefined };
    if (typeof body === "string")
      return { bytes: Bytes.from(body, "utf8"), type: "text/plain;charset=UTF-8" };
    if (body instanceof URLSearchParams)
      return {
        bytes: Bytes.from(body.toString(), "utf8"),
        type: "application/x-www-form-urlencoded;charset=UTF-8",
      };
    if (isView(body)) return { bytes: Bytes.from(body.buffer, body.byteOffset, body.byteLength) };
    if (tag(body) === "[object ArrayBuffer]") return { bytes: Bytes.from(body) };
    if (typeof body === "object" && typeof body.pipe === "function")
      throw new TypeError("Stream bodies are not supported here: pass a string, Buffer or ArrayBuffer");
    return { bytes: Bytes.from(String(body), "utf8"), type: "text/plain;charset=UTF-8" };
  };
  class Body {
    #bytes;
    bodyUsed = false;
    constructor(bytes) {
      this.#bytes = bytes;
    }
    #consume() {
      if (this.bodyUsed) return Promise.reject(new TypeError("Body is unusable: Body has already been read"));
      this.bodyUsed = true;
      return Promise.resolve(this.#bytes ?? Bytes.alloc(0));
    }
    get body() {
      return this.#bytes === undefined ? null : this.#bytes;
    }
    text() {
      return this.#consume().then((bytes) => bytes.toString("utf8"));
    }
    json() {
      return this.text().then((text) => parse(text));
    }
    arrayBuffer() {
      return this.#consume().then((bytes) =>
        bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      );
    }
    /** node-fetch v2. */
    buffer() {
      return this.#consume();
    }
    bytes() {
      return this.#consume().then((bytes) => new Uint8Array(bytes));
    }
    static bytesOf(body) {
      return body.#bytes;
    }
  }
  class Request extends Body {
    constructor(input, init = {}) {
      const from = input instanceof Request ? input : undefined;
      const given = init.body !== undefined ? init.body : from ? Body.bytesOf(from) : undefined;
      const { bytes, type } = bodyBytes(given);
      super(bytes);
      this.url = new URL(from ? from.url : String(input)).href;
      this.method = String(init.method ?? from?.method ?? "GET").toUpperCase();
      if ((this.method === "GET" || this.method === "HEAD") && bytes !== undefined)
        throw new TypeError("Request with GET/HEAD method cannot have body");
      this.headers = new Headers(init.headers ?? from?.headers);
      if (type !== undefined && !this.headers.has("content-type")) this.headers.set("content-type", type);
      this.redirect = init.redirect ?? from?.redirect ?? "follow";
      if (!["follow", "manual", "error"].includes(this.redirect))
        throw new TypeError(`Invalid redirect: ${this.redirect}`);
      this.signal = init.signal ?? from?.signal ?? null;
      this.timeout = init.timeout ?? from?.timeout ?? 0; // node-fetch v2's per-request timeout
    }
    clone() {
      return new Request(this);
    }
  }
  class Response extends Body {
    #url;
    #redirected;
    constructor(body = null, init = {}, meta = undefined) {
      const { bytes, type } = bodyBytes(body);
      super(bytes);
      this.status = init.status ?? 200;
      this.statusText = init.statusText ?? "";
      this.headers = new Headers(init.headers);
      if (type !== undefined && !this.headers.has("content-type")) this.headers.set("content-type", type);
      this.#url = meta?.url ?? "";
      this.#redirected = meta?.redirected === true;
    }
    get ok() {
      return this.status >= 200 && this.status < 300;
    }
    get url() {
      return this.#url;
    }
    get redirected() {
      return this.#redirected;
    }
    get type() {
      return "basic";
    }
    clone() {
      if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
      return new Response(Body.bytesOf(this) ?? null, this, { url: this.#url, redirected: this.#redirected });
    }
    static json(data, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(stringify(data), { ...init, headers });
    }
    static error() {
      return new Response(null, { status: 0 });
    }
    static redirect(url, status = 302) {
      return new Response(null, { status, headers: { location: new URL(String(url)).href } });
    }
  }

  const fetch = (input, init) => {
    let request;
    try {
      request = new Request(input, init ?? {});
    } catch (error) {
      return Promise.reject(error);
    }
    const signal = request.signal;
    if (signal?.aborted) return Promise.reject(new AbortError());
    const bytes = Body.bytesOf(request);
    let json;
    try {
      json = stringify({
        url: request.url,
        method: request.method,
        headers: Headers.pairsOf(request.headers),
        body: bytes === undefined ? undefined : bytes.toString("base64"),
        redirect: request.redirect,
        timeoutMs: Number(request.timeout) > 0 ? Number(request.timeout) : undefined,
      });
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const id = host.fetch(json);
      if (typeof id !== "number" || id < 1) {
        reject(
          new FetchError(
            `request to ${request.url} failed: the run has ended, or the request is too large`,
            "refused",
          ),
        );
        return;
      }
      const onAbort = () => {
        calls.delete(id);
        host.cancelFetch(id);
        reject(new AbortError());
      };
      if (signal) signal.addEventListener("abort", onAbort);
      calls.set(id, (ok, payload) => {
        if (signal) signal.removeEventListener("abort", onAbort);
        if (!ok) {
          const info = parse(payload);
          reject(
            info.type === "aborted" ? new AbortError(info.message) : new FetchError(info.message, info.type),
          );
          return;
        }
        const answer = parse(payload);
        resolve(
          new Response(
            answer.body === undefined ? null : Bytes.from(answer.body, "base64"),
            { status: answer.status, statusText: answer.statusText, headers: answer.headers },
            { url: answer.url, redirected: answer.redirected },
          ),
        );
      });
    });
  };

  // node-fetch: the function itself, with `default` and the named exports of v2 and v3.
  const nodeFetch = (input, init) => fetch(input, init);
  Object.assign(nodeFetch, {
    default: nodeFetch,
    Headers,
    Request,
    Response,
    FetchError,
    AbortError,
    isRedirect: (status) => [301, 302, 303, 307, 308].includes(status),
  });
  Object.defineProperty(nodeFetch, "__esModule", { value: true });

  Object.assign(globals, { fetch, Headers, Request, Response, AbortController, AbortSignal });
  return { globals, fired, nodeFetch };
}

/**
 * Runs first in every fresh context, compiled once (in strict mode) and evaluated as `(driver)()`. It takes the host
 * capabilities off the global before any code of the run can look, builds `module`, `require` and
 * `req.svc`, calls the code and reports through `host.done`. It hands the host only strings and numbers,
 * and never passes a host object to anything the code could have replaced.
 */
function driver(codeRuntime) {
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
const DRIVER = new vm.Script(`"use strict"; (${driver.toString()})(${codeRuntime.toString()})`, {
  filename: "sandbox-driver.js",
});

/** Compiled code by SHA-256 (computed by the host): { script } or { error } for code that does not compile. */
const compiled = new Map();
function compile(code) {
  try {
    // Parsed as a function body first: code that closes the wrapper early (`}); ...`) is refused instead of
    // running outside the module function.
    vm.compileFunction(code, ["exports", "require", "module"]);
    const wrapped = `(function (exports, require, module) {\n${code}\n})`;
    return {
      script: new vm.Script(wrapped, { filename: "transform.js", lineOffset: -1 }),
      packages: packagesNamedIn(code),
    };
  } catch (error) {
    const name = typeof error?.name === "string" ? error.name : "SyntaxError";
    const message = typeof error?.message === "string" ? error.message : "";
    return { error: JSON.stringify({ name, message }) };
  }
}

/**
 * Runs in flight: id → { context, deadline, answers (svc and fetch answers not yet taken), nextCall (one
 * numbering for svc and fetch calls), drainTimer, drainDelay and activeAt (scheduleDrain), cleanups, timers
 * (pending: id → cancel), fired (timer ids not yet taken), nextTimer }.
 * Contexts use their own microtask queue (`afterEvaluate`), which only runs when this file enters the
 * context with a vm timeout: so every piece of the code's work, promise jobs included, is bounded by the
 * run's deadline here too, and a process whose host vanished (no one left to kill it) never spins for
 * longer than one timeout before it notices the disconnect.
 */
const runs = new Map();
/** Hands the run its svc/fetch answers and fired timers, then (afterEvaluate) runs its queued promise jobs. */
const DRAIN = new vm.Script('"use strict"; __sandboxPump();', { filename: "sandbox-drain.js" });
/**
 * How often a waiting run's queue is drained for jobs of promises settled outside the context (webcrypto, a
 * module's callback): every DRAIN_FAST_MS for DRAIN_FAST_WINDOW_MS after the run last did something (started,
 * got an svc or fetch answer, had a timer fire: each of those drains at once), then backing off, doubling, to
 * DRAIN_SLOW_MS. A run waiting for a slow partner used to be woken every millisecond: about 15 % of a core
 * each, for nothing.
 */
const DRAIN_FAST_MS = 1;
const DRAIN_FAST_WINDOW_MS = 10;
const DRAIN_SLOW_MS = 16;

/** Schedules the run's next drain: fast within the window after its last activity, slower and slower after. */
function scheduleDrain(id, state) {
  clearTimeout(state.drainTimer);
  const idle = performance.now() - state.activeAt;
  state.drainDelay =
    idle < DRAIN_FAST_WINDOW_MS ? DRAIN_FAST_MS : Math.min(DRAIN_SLOW_MS, state.drainDelay * 2);
  state.drainTimer = setTimeout(() => {
    enter(id, DRAIN);
    if (runs.get(id) === state) scheduleDrain(id, state);
  }, state.drainDelay);
}

/** The run did something: its next drains come fast again. */
function active(id) {
  const state = runs.get(id);
  if (state === undefined || state.drainTimer === undefined) return;
  state.activeAt = performance.now();
  if (state.drainDelay > DRAIN_FAST_MS) scheduleDrain(id, state);
}

function done(id, kind, payload) {
  const state = runs.get(id);
  if (state === undefined) return;
  runs.delete(id);
  clearTimeout(state.drainTimer);
  // Nothing a run scheduled outlives it: whatever this file gives a run that schedules work (timers, later)
  // registers its canceller in `cleanups`. Work scheduled through Node itself (a module's callback,
  // thread-pool jobs) cannot be cancelled here: the host's watchdog kills a process that uses CPU while idle.
  for (const cancel of state.cleanups.splice(0)) cancel();
  send({ t: "done", id, kind, payload });
}

/** Runs `script` in the run's context, then its queued promise jobs, within what is left of its time. */
function enter(id, script) {
  const state = runs.get(id);
  if (state === undefined) return undefined;
  const left = Math.ceil(state.deadline - performance.now());
  if (left < 1) {
    done(id, "timeout", undefined);
    return undefined;
  }
  // What a turn (or a Node callback outside any turn) set there is gone before another turn can read it.
  EventEmitter.defaultMaxListeners = DEFAULT_MAX_LISTENERS;
  try {
    return script.runInContext(state.context, { timeout: left });
  } catch (error) {
    if (error?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") done(id, "timeout", undefined);
    else done(id, "thrown", '{"name":"Error","message":"the run failed"}');
    return undefined;
  } finally {
    EventEmitter.defaultMaxListeners = DEFAULT_MAX_LISTENERS;
  }
}

function run(message) {
  const { id, hash, input, svc, timeoutMs, maxResultChars } = message;
  let entry = compiled.get(hash);
  if (entry === undefined) {
    if (typeof message.code !== "string") {
      send({ t: "done", id, kind: "invalid-code", payload: '{"name":"Error","message":"no code"}' });
      return;
    }
    entry = compile(message.code);
    compiled.set(hash, entry);
  }
  if (entry.error !== undefined) {
    send({ t: "done", id, kind: "invalid-code", payload: entry.error });
    return;
  }
  const sandbox = Object.create(null);
  Object.assign(sandbox, GLOBALS);
  const context = vm.createContext(sandbox, CONTEXT_OPTIONS);
  const state = {
    context,
    deadline: performance.now() + timeoutMs,
    answers: [],
    nextCall: 0,
    cleanups: [],
    timers: new Map(),
    fired: [],
    nextTimer: 0,
  };
  state.cleanups.push(() => {
    for (const cancel of state.timers.values()) cancel();
    state.timers.clear();
  });
  runs.set(id, state);

  const factory = enter(id, entry.script);
  if (!runs.has(id)) return;
  if (typeof factory !== "function") {
    done(id, "invalid-code", '{"name":"TypeError","message":"the code is not a module body"}');
    return;
  }
  // Wrappers of the packages the code names, made now, outside the code's turn: making one while the code runs
  // (a name computed at run time) runs the context's queued promise jobs early (afterEvaluate).
  const packageFactories = new Map();
  for (const name of entry.packages) {
    const script = packageScript(name);
    if (script === undefined) continue;
    const wrapper = enter(id, script);
    if (!runs.has(id)) return;
    packageFactories.set(name, wrapper);
  }
  sandbox.__sandboxHost = Object.freeze({
    __proto__: null,
    factory,
    input,
    svc,
    allowed: REQUIRABLE,
    errorsModule: ERRORS_MODULE,
    errorGlobals: ERROR_GLOBALS.join(","),
    require: (name) => (typeof name === "string" && FACADES.has(name) ? facade(name) : undefined),
    packageFactory: (name) => {
      if (typeof name !== "string" || !PACKAGE_FILES.has(name) || !runs.has(id)) return undefined;
      if (!packageFactories.has(name)) {
        const script = packageScript(name);
        if (script === undefined) return undefined;
        packageFactories.set(name, script.runInContext(context));
      }
      return packageFactories.get(name);
    },
    take: () => {
      const answers = state.answers;
      state.answers = [];
      return JSON.stringify(answers);
    },
    call: (op, args) => {
      if (!svc || !runs.has(id) || typeof op !== "string" || !SVC_OPERATIONS.includes(op)) return -1;
      if (typeof args !== "string" || args.length > maxResultChars) return -1;
      state.nextCall += 1;
      send({ t: "svc", id, call: state.nextCall, op, args });
      return state.nextCall;
    },
    fetch: (request) => {
      if (!runs.has(id) || typeof request !== "string" || request.length > maxResultChars) return -1;
      state.nextCall += 1;
      send({ t: "fetch", id, call: state.nextCall, request });
      return state.nextCall;
    },
    cancelFetch: (call) => {
      if (runs.has(id) && typeof call === "number") send({ t: "fetch-cancel", id, call });
    },
    timer: (kind, ms) => schedule(id, state, kind, ms),
    clearTimer: (timer) => {
      state.timers.get(timer)?.();
      state.timers.delete(timer);
    },
    fired: () => {
      const fired = state.fired;
      state.fired = [];
      return JSON.stringify(fired);
    },
    done: (kind, payload) => {
      if (kind !== "ok" && kind !== "thrown" && kind !== "invalid-code") return;
      if (payload !== undefined && typeof payload !== "string") return;
      if (payload !== undefined && payload.length > maxResultChars) done(id, "too-large", undefined);
      else done(id, kind, kind === "ok" || payload === undefined ? payload : withoutHostPaths(payload));
    },
  });
  enter(id, DRIVER);
  if (!runs.has(id)) return; // finished (or failed) within its first turn: the usual case
  state.activeAt = performance.now();
  state.drainDelay = DRAIN_FAST_MS;
  scheduleDrain(id, state);
}

/** Most timers one run may have pending at once. */
const MAX_TIMERS = 10_000;

/** Starts a real timer for the run; when it fires, the run's pump calls the code's callback. */
function schedule(id, state, kind, ms) {
  if (!runs.has(id) || state.timers.size >= MAX_TIMERS) return -1;
  if (kind !== "timeout" && kind !== "interval" && kind !== "immediate") return -1;
  const delay = typeof ms === "number" && ms >= 1 && ms <= 2147483647 ? ms : 1;
  state.nextTimer += 1;
  const timer = state.nextTimer;
  const fire = () => {
    if (kind !== "interval") state.timers.delete(timer);
    state.fired.push(timer);
    enter(id, DRAIN);
    active(id);
  };
  if (kind === "immediate") {
    const handle = setImmediate(fire);
    state.timers.set(timer, () => clearImmediate(handle));
  } else if (kind === "interval") {
    const handle = setInterval(fire, delay);
    state.timers.set(timer, () => clearInterval(handle));
  } else {
    const handle = setTimeout(fire, delay);
    state.timers.set(timer, () => clearTimeout(handle));
  }
  return timer;
}

function svcResult(message) {
  const state = runs.get(message.id);
  if (state === undefined) return;
  state.answers.push([message.call, message.ok === true, message.payload]);
  enter(message.id, DRAIN);
  active(message.id);
}

proc.on("message", (message) => {
  if (message?.t === "run") run(message);
  else if (message?.t === "svc-result" || message?.t === "fetch-result") svcResult(message);
});
// The code's own unhandled rejections must not end the process (and the other runs in it).
proc.on("unhandledRejection", () => {});
// The host went away (even killed): never outlive it.
proc.on("disconnect", () => proc.exit(0));
send({ t: "ready" });
