// @ts-check
/**
 * One sandbox process, started by sandbox-process.ts for ONE (tenant, code) key, under Node's permission model
 * (it may read its own files and nothing else; no writes, child processes, workers, addons, inspector), with an
 * empty environment, code generation from strings disabled and frozen intrinsics.
 *
 * Plain JavaScript with only built-in imports: it starts without a loader and is copied next to a bundle as
 * is, with the modules it imports (spawn.ts CHILD_FILES): the lockdown (child-lockdown.mjs), the runtime of the
 * code (child-runtime.mjs: timers, fetch) and the driver of a run (child-driver.mjs). This file is the host of
 * the runs: it compiles code and packages, makes each run's context, enters it within the run's time, and
 * carries timers, svc calls and fetches over IPC. Messages are described in runner-protocol.ts.
 *
 * Each run gets a NEW vm context: the input is parsed and the result serialised inside it, and the only
 * objects of this realm it can reach are frozen built-ins (the allowed modules and a few globals), and there is
 * no Buffer pool: nothing a run leaves behind is readable by a later run (of another caller). Timers,
 * `fetch` and their classes are built inside the context (codeRuntime); `fetch` asks the host, which carries
 * the request out: this process has no network.
 */
// First, and a bare import so that no sorting of imports moves it: the lockdown runs before anything else of this
// process (modules are evaluated in import order).
import "./child-lockdown.mjs";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { DRIVER } from "./child-driver.mjs";
import {
  ALLOWED_MODULES,
  DEFAULT_MAX_LISTENERS,
  FACADES,
  facade,
  GLOBALS,
  proc,
  send,
} from "./child-lockdown.mjs";

/**
 * @typedef {import("./runner-protocol.ts").RunMessage} RunMessage
 * @typedef {import("./runner-protocol.ts").SvcResultMessage} SvcResultMessage
 * @typedef {import("./runner-protocol.ts").FetchResultMessage} FetchResultMessage
 * @typedef {import("./runner-protocol.ts").ChildMessage} ChildMessage
 * @typedef {import("./runner-protocol.ts").DoneKind} DoneKind
 * @typedef {import("./child-driver.mjs").SandboxHost} SandboxHost
 * @typedef {"timeout" | "interval" | "immediate"} TimerKind
 */

const SVC_OPERATIONS = ["tokens.create", "tokens.retrieve", "tokens.update", "tokens.delete"];

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
/** @type {Map<string, { script?: vm.Script, error?: true }>} */
const packageScripts = new Map();
/** @param {string} name @returns {vm.Script | undefined} */
function packageScript(name) {
  let entry = packageScripts.get(name);
  if (entry === undefined) {
    try {
      const source = readFileSync(/** @type {URL} */ (PACKAGE_FILES.get(name)), "utf8");
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
 * @param {string} code
 */
function packagesNamedIn(code) {
  const names = new Set();
  if (ERROR_GLOBALS.some((name) => code.includes(name))) names.add(ERRORS_MODULE);
  for (const match of code.matchAll(/\brequire\s*\(\s*(["'`])([^"'`]+)\1\s*\)/g)) {
    const named = /** @type {string} */ (match[2]);
    const name = named.startsWith("node:") ? named.slice(5) : named;
    if (PACKAGE_FILES.has(name)) names.add(name);
  }
  return [...names];
}
/** This file's directory: left out of every message sent back (a run's errors may quote it). */
const HOST_DIR = fileURLToPath(new URL(".", import.meta.url));
/** @param {string} text */
const withoutHostPaths = (text) => (HOST_DIR.length > 1 ? text.split(HOST_DIR).join("") : text);

/** @type {vm.CreateContextOptions} */
const CONTEXT_OPTIONS = {
  name: "transform",
  codeGeneration: { strings: false, wasm: false },
  microtaskMode: "afterEvaluate",
};

/** Compiled code by SHA-256 (computed by the host): { script } or { error } for code that does not compile. */
/** @type {Map<string, { script: vm.Script, packages: string[] } | { error: string }>} */
const compiled = new Map();
/** @param {string} code */
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
  } catch (caught) {
    const error = /** @type {{ name?: unknown, message?: unknown } | undefined} */ (caught);
    const name = typeof error?.name === "string" ? error.name : "SyntaxError";
    const message = typeof error?.message === "string" ? error.message : "";
    return { error: JSON.stringify({ name, message }) };
  }
}

/**
 * A run in flight.
 * @typedef {object} RunState
 * @property {vm.Context} context
 * @property {number} deadline `performance.now()` by which the run must be done
 * @property {[number, boolean, string | undefined][]} answers svc and fetch answers not yet taken: [call, ok, payload]
 * @property {number} nextCall one numbering for svc and fetch calls
 * @property {NodeJS.Timeout} [drainTimer] the next drain (scheduleDrain), once the first turn is over
 * @property {number} drainDelay
 * @property {number} activeAt
 * @property {(() => void)[]} cleanups what cancels the work the run scheduled
 * @property {Map<number, () => void>} timers pending: timer id → cancel
 * @property {number[]} fired timer ids not yet taken
 * @property {number} nextTimer
 */

/**
 * Runs in flight by id. Contexts use their own microtask queue (`afterEvaluate`), which only runs when this file enters the
 * context with a vm timeout: so every piece of the code's work, promise jobs included, is bounded by the
 * run's deadline here too, and a process whose host vanished (no one left to kill it) never spins for
 * longer than one timeout before it notices the disconnect.
 */
/** @type {Map<number, RunState>} */
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

/**
 * Schedules the run's next drain: fast within the window after its last activity, slower and slower after.
 * @param {number} id
 * @param {RunState} state
 */
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

/** The run did something: its next drains come fast again. @param {number} id */
function active(id) {
  const state = runs.get(id);
  if (state === undefined || state.drainTimer === undefined) return;
  state.activeAt = performance.now();
  if (state.drainDelay > DRAIN_FAST_MS) scheduleDrain(id, state);
}

/** @param {number} id @param {DoneKind} kind @param {string | undefined} payload */
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

/**
 * Runs `script` in the run's context, then its queued promise jobs, within what is left of its time.
 * @param {number} id
 * @param {vm.Script} script
 * @returns {unknown} what the script evaluated to
 */
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
    if (/** @type {{ code?: unknown } | undefined} */ (error)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
      done(id, "timeout", undefined);
    else done(id, "thrown", '{"name":"Error","message":"the run failed"}');
    return undefined;
  } finally {
    EventEmitter.defaultMaxListeners = DEFAULT_MAX_LISTENERS;
  }
}

/** @param {RunMessage} message */
function run(message) {
  const { id, hash, input, parseArgsBody, svc, timeoutMs, maxResultChars } = message;
  let entry = compiled.get(hash);
  if (entry === undefined) {
    if (typeof message.code !== "string") {
      send({ t: "done", id, kind: "invalid-code", payload: '{"name":"Error","message":"no code"}' });
      return;
    }
    entry = compile(message.code);
    compiled.set(hash, entry);
  }
  if ("error" in entry) {
    send({ t: "done", id, kind: "invalid-code", payload: entry.error });
    return;
  }
  const sandbox = Object.create(null);
  Object.assign(sandbox, GLOBALS);
  const context = vm.createContext(sandbox, CONTEXT_OPTIONS);
  /** @type {RunState} */
  const state = {
    context,
    deadline: performance.now() + timeoutMs,
    answers: [],
    nextCall: 0,
    drainDelay: DRAIN_FAST_MS,
    activeAt: 0,
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
  /** @type {Map<string, unknown>} */
  const packageFactories = new Map();
  for (const name of entry.packages) {
    const script = packageScript(name);
    if (script === undefined) continue;
    const wrapper = enter(id, script);
    if (!runs.has(id)) return;
    packageFactories.set(name, wrapper);
  }
  /** @type {SandboxHost} */
  const host = {
    __proto__: null,
    factory,
    input,
    parseArgsBody: parseArgsBody === true,
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
    clearTimer: (given) => {
      const timer = /** @type {number} */ (given); // anything else finds no timer
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
  };
  sandbox.__sandboxHost = Object.freeze(host);
  enter(id, DRIVER);
  if (!runs.has(id)) return; // finished (or failed) within its first turn: the usual case
  state.activeAt = performance.now();
  state.drainDelay = DRAIN_FAST_MS;
  scheduleDrain(id, state);
}

/** Most timers one run may have pending at once. */
const MAX_TIMERS = 10_000;

/**
 * Starts a real timer for the run; when it fires, the run's pump calls the code's callback.
 * @param {number} id
 * @param {RunState} state
 * @param {unknown} kind
 * @param {unknown} ms
 */
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

/** @param {SvcResultMessage | FetchResultMessage} message */
function svcResult(message) {
  const state = runs.get(message.id);
  if (state === undefined) return;
  state.answers.push([message.call, message.ok === true, message.payload]);
  enter(message.id, DRAIN);
  active(message.id);
}

proc.on(
  "message",
  (/** @type {Partial<RunMessage | SvcResultMessage | FetchResultMessage> | null} */ message) => {
    // The host is this process's only peer (IPC); its messages are not checked again here.
    if (message?.t === "run") run(/** @type {RunMessage} */ (message));
    else if (message?.t === "svc-result" || message?.t === "fetch-result")
      svcResult(/** @type {SvcResultMessage | FetchResultMessage} */ (message));
  },
);
// The code's own unhandled rejections must not end the process (and the other runs in it).
proc.on("unhandledRejection", () => {});
// The host went away (even killed): never outlive it.
proc.on("disconnect", () => proc.exit(0));
send({ t: "ready" });
