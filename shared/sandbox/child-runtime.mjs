// @ts-check
/**
 * The runtime a run's code gets on top of the JavaScript built-ins: timers, `fetch` and the WHATWG classes
 * around it. Never called in the sandbox process's realm: child-driver.mjs evaluates its source inside each
 * run's context, so it may use nothing from outside its own body (no imports, no module variables).
 */

/**
 * What a run's code gets on top of the JavaScript built-ins: timers, `fetch` (carried out by the host) and
 * the WHATWG classes around it. Evaluated inside each run's context by the driver (so every class and
 * promise is of that context's realm), never in this file's realm. `host` is the run's capability object;
 * `calls` maps the ids of host calls in flight to their `settle(ok, payload)` (the driver's pump delivers the
 * answers); `fail` ends the run as `thrown` (an error thrown by a timer callback, as Node would crash on it).
 */
export function codeRuntime(host, calls, fail) {
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
