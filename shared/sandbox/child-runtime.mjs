// @ts-check
/**
 * The runtime a run's code gets on top of the JavaScript built-ins: timers, `fetch` and the WHATWG classes
 * around it. Never called in the sandbox process's realm: child-driver.mjs evaluates its source inside each
 * run's context, so it may use nothing from outside its own body (no imports, no module variables).
 */

/**
 * @typedef {import("./child-driver.mjs").CodeValue} CodeValue
 * @typedef {import("./child-driver.mjs").SandboxHost} SandboxHost
 * @typedef {import("./child-driver.mjs").Settle} Settle
 */

/**
 * What a run's code gets on top of the JavaScript built-ins: timers, `fetch` (carried out by the host) and
 * the WHATWG classes around it. Evaluated inside each run's context by the driver (so every class and
 * promise is of that context's realm), never in this file's realm. `host` is the run's capability object;
 * `calls` maps the ids of host calls in flight to their `settle(ok, payload)` (the driver's pump delivers the
 * answers); `fail` ends the run as `thrown` (an error thrown by a timer callback, as Node would crash on it).
 * @param {SandboxHost} host
 * @param {Map<number, Settle>} calls
 * @param {(error: CodeValue) => void} fail
 * @returns {{ globals: Record<string, unknown>, fired: (ids: number[]) => void, nodeFetch: CodeValue }}
 */
export function codeRuntime(host, calls, fail) {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const ownKeys = Object.keys;
  const isView = ArrayBuffer.isView;
  const tag = (/** @type {unknown} */ value) => Object.prototype.toString.call(value);
  const Bytes = Buffer; // this process's frozen Buffer, also a global of the context

  // --- timers: the host's real timers, cancelled when the run ends; callbacks run inside the context ---
  /** @type {Map<number, { callback: Function, args: CodeValue[], repeat: boolean }>} */
  const timers = new Map();
  const TIMER_ID = Symbol("timer id");
  class Timeout {
    /** @type {number} */
    [TIMER_ID];
    /** @param {number} id */
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
  /**
   * @param {"timeout" | "interval" | "immediate"} kind
   * @param {CodeValue} callback
   * @param {CodeValue} delay
   * @param {CodeValue[]} args
   */
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
  const clear = (/** @type {CodeValue} */ handle) => {
    const id = handle instanceof Timeout ? handle[TIMER_ID] : Number(handle);
    if (!timers.has(id)) return;
    timers.delete(id);
    host.clearTimer(id);
  };
  /** Runs the callbacks of timers the host saw fire, in order. */
  const fired = (/** @type {number[]} */ ids) => {
    for (let i = 0; i < ids.length; i++) {
      const id = /** @type {number} */ (ids[i]);
      const timer = timers.get(id);
      if (timer === undefined) continue;
      if (!timer.repeat) timers.delete(id);
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
    setTimeout: (
      /** @type {CodeValue} */ callback,
      /** @type {CodeValue} */ delay,
      /** @type {CodeValue[]} */ ...args
    ) => schedule("timeout", callback, delay, args),
    setInterval: (
      /** @type {CodeValue} */ callback,
      /** @type {CodeValue} */ delay,
      /** @type {CodeValue[]} */ ...args
    ) => schedule("interval", callback, delay, args),
    setImmediate: (/** @type {CodeValue} */ callback, /** @type {CodeValue[]} */ ...args) =>
      schedule("immediate", callback, 0, args),
    clearTimeout: clear,
    clearInterval: clear,
    clearImmediate: clear,
    queueMicrotask: (/** @type {CodeValue} */ callback) => {
      if (typeof callback !== "function")
        throw new TypeError('The "callback" argument must be of type function');
      queued.then(() => callback()).catch(fail);
    },
  };

  // --- AbortController, enough for fetch and timeouts ---
  class AbortSignal {
    /** @type {Function[]} */
    #listeners = [];
    aborted = false;
    /** @type {CodeValue} */
    reason = undefined;
    /** @type {CodeValue} */
    onabort = null;
    /** @param {CodeValue} type @param {CodeValue} listener */
    addEventListener(type, listener) {
      if (type === "abort" && typeof listener === "function") this.#listeners.push(listener);
    }
    /** @param {CodeValue} _type @param {CodeValue} listener */
    removeEventListener(_type, listener) {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    }
    throwIfAborted() {
      if (this.aborted) throw this.reason;
    }
    /** @param {CodeValue} reason */
    static abort(reason) {
      const controller = new AbortController();
      controller.abort(reason);
      return controller.signal;
    }
    /** @param {CodeValue} ms */
    static timeout(ms) {
      const controller = new AbortController();
      globals.setTimeout(
        () => controller.abort(domError("The operation was aborted due to timeout", "TimeoutError")),
        ms,
      );
      return controller.signal;
    }
    /** @param {CodeValue} reason */
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
    /** @param {CodeValue} [reason] */
    abort(reason) {
      this.signal._abort(
        reason === undefined ? domError("This operation was aborted", "AbortError") : reason,
      );
    }
  }
  /** @param {string} message @param {string} name */
  const domError = (message, name) => {
    const error = new Error(message);
    error.name = name;
    return error;
  };

  // --- fetch and its classes (node-fetch's names and shapes) ---
  class FetchError extends TypeError {
    /** @param {string} message @param {string} type @param {{ code?: string }} [systemError] */
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
  const headerName = (/** @type {CodeValue} */ name) => {
    const text = String(name).toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(text))
      throw new TypeError(`Header name must be a valid HTTP token [${name}]`);
    return text;
  };
  const headerValue = (/** @type {CodeValue} */ value) => {
    const text = String(value).trim();
    if (/[\r\n\0]/.test(text)) throw new TypeError("Invalid character in header content");
    return text;
  };
  class Headers {
    /** @type {Map<string, string[]>} */
    #map = new Map(); // lower-cased name → values
    /** @param {CodeValue} [init] */
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
    /** @param {CodeValue} name @param {CodeValue} value */
    append(name, value) {
      const key = headerName(name);
      const values = this.#map.get(key);
      if (values) values.push(headerValue(value));
      else this.#map.set(key, [headerValue(value)]);
    }
    /** @param {CodeValue} name @param {CodeValue} value */
    set(name, value) {
      this.#map.set(headerName(name), [headerValue(value)]);
    }
    /** @param {CodeValue} name */
    get(name) {
      const values = this.#map.get(headerName(name));
      return values === undefined ? null : values.join(", ");
    }
    getSetCookie() {
      return [...(this.#map.get("set-cookie") ?? [])];
    }
    /** @param {CodeValue} name */
    has(name) {
      return this.#map.has(headerName(name));
    }
    /** @param {CodeValue} name */
    delete(name) {
      this.#map.delete(headerName(name));
    }
    /** @param {CodeValue} callback @param {CodeValue} [thisArg] */
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
      /** @type {Record<string, string[]>} */
      const raw = {};
      for (const [name, values] of this.#map) raw[name] = [...values];
      return raw;
    }
    #pairs() {
      /** @type {[string, string][]} */
      const pairs = [];
      for (const [name, values] of this.#map) for (const value of values) pairs.push([name, value]);
      return pairs;
    }
    /** @param {Headers} headers */
    static pairsOf(headers) {
      return headers.#pairs();
    }
  }
  /**
   * Bytes of a request or response body, and the content type it implies.
   * @param {CodeValue} body
   * @returns {{ bytes: Buffer | undefined, type?: string }}
   */
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
    /** @type {Buffer | undefined} */
    #bytes;
    bodyUsed = false;
    /** @param {Buffer | undefined} bytes */
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
    /** @param {Body} body */
    static bytesOf(body) {
      return body.#bytes;
    }
  }
  class Request extends Body {
    /** @param {CodeValue} input @param {CodeValue} [init] */
    constructor(input, init = {}) {
      /** @type {Request | undefined} */
      const from = input instanceof Request ? input : undefined;
      const given = init.body !== undefined ? init.body : from ? Body.bytesOf(from) : undefined;
      const { bytes, type } = bodyBytes(given);
      super(bytes);
      /** @type {string} */
      this.url = new URL(from ? from.url : String(input)).href;
      /** @type {string} */
      this.method = String(init.method ?? from?.method ?? "GET").toUpperCase();
      if ((this.method === "GET" || this.method === "HEAD") && bytes !== undefined)
        throw new TypeError("Request with GET/HEAD method cannot have body");
      this.headers = new Headers(init.headers ?? from?.headers);
      if (type !== undefined && !this.headers.has("content-type")) this.headers.set("content-type", type);
      /** @type {CodeValue} */
      this.redirect = init.redirect ?? from?.redirect ?? "follow";
      if (!["follow", "manual", "error"].includes(this.redirect))
        throw new TypeError(`Invalid redirect: ${this.redirect}`);
      /** @type {CodeValue} */
      this.signal = init.signal ?? from?.signal ?? null;
      /** @type {CodeValue} */
      this.timeout = init.timeout ?? from?.timeout ?? 0; // node-fetch v2's per-request timeout
    }
    clone() {
      return new Request(this);
    }
  }
  class Response extends Body {
    /** @type {string} */
    #url;
    /** @type {boolean} */
    #redirected;
    /**
     * @param {CodeValue} [body]
     * @param {CodeValue} [init]
     * @param {{ url?: string, redirected?: boolean }} [meta] what the host says of a fetch's answer
     */
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
    /** @param {CodeValue} data @param {CodeValue} [init] */
    static json(data, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(stringify(data), { ...init, headers });
    }
    static error() {
      return new Response(null, { status: 0 });
    }
    /** @param {CodeValue} url @param {CodeValue} [status] */
    static redirect(url, status = 302) {
      return new Response(null, { status, headers: { location: new URL(String(url)).href } });
    }
  }

  /** @param {CodeValue} input @param {CodeValue} [init] @returns {Promise<Response>} */
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
          const info = parse(/** @type {string} */ (payload)); // a fetch's answer always carries its JSON
          reject(
            info.type === "aborted" ? new AbortError(info.message) : new FetchError(info.message, info.type),
          );
          return;
        }
        const answer = parse(/** @type {string} */ (payload));
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
  const nodeFetch = (/** @type {CodeValue} */ input, /** @type {CodeValue} */ init) => fetch(input, init);
  Object.assign(nodeFetch, {
    default: nodeFetch,
    Headers,
    Request,
    Response,
    FetchError,
    AbortError,
    isRedirect: (/** @type {CodeValue} */ status) => [301, 302, 303, 307, 308].includes(status),
  });
  Object.defineProperty(nodeFetch, "__esModule", { value: true });

  Object.assign(globals, { fetch, Headers, Request, Response, AbortController, AbortSignal });
  return { globals, fired, nodeFetch };
}
