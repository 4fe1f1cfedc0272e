/**
 * The frame runtime (frame.js), served from the vault's origin inside the Elements iframes. It renders the
 * inputs, checks them, and (in the hidden controller frame) calls the API itself. Nothing it posts to the page
 * holds a value typed or revealed: change events carry states, create answers are what POST /tokens answers,
 * and revealed data leaves become opaque references that only a `text` frame of the same page can show.
 */
import {
  checkCvc,
  checkExpiry,
  checkNumber,
  digitsOf,
  type FieldCheck,
  formatCvc,
  formatExpiry,
  formatNumber,
  parseExpiry,
} from "./card-rules.ts";
import {
  type Answer,
  type Call,
  type ChangeEvent,
  type ControllerHandle,
  type ElementHandle,
  type ElementOptions,
  type ElementStyle,
  type ElementType,
  type FrameEvent,
  type FrameRole,
  type Hello,
  isRefString,
  type Ready,
  type Request,
  STYLE_PROPERTIES,
  type StyleRules,
} from "./protocol.ts";

/** The origins the page may be on: the server put the key's application's allowed_origins here (and in the CSP). */
const allowedOrigins = (
  document.querySelector<HTMLMetaElement>('meta[name="svc-allowed-origins"]')?.content ?? ""
)
  .split(" ")
  .filter(Boolean);

declare global {
  interface Window {
    svcElement?: ElementHandle;
    svcController?: ControllerHandle;
  }
}

let port: MessagePort | undefined;
/** The embedding page's origin (the handshake's): sent with every API call, which the API checks as it checks `Origin`. */
let parentOrigin: string | undefined;

function emit(event: FrameEvent): void {
  port?.postMessage(event);
}

// ---- The handshake: only the embedding page, only from an allowed origin, only once. ----
window.addEventListener("message", (event: MessageEvent) => {
  if (port) return;
  if (event.source !== window.parent || !allowedOrigins.includes(event.origin)) return;
  const hello = event.data as Partial<Hello> | null;
  const channel = event.ports[0];
  if (hello?.svc !== "elements-hello" || typeof hello.id !== "string" || !channel) return;
  port = channel;
  parentOrigin = event.origin;
  const role = hello.role as FrameRole;
  const behaviour = role === "controller" ? controller() : element(role, hello.id, hello.options ?? {});
  port.onmessage = (message: MessageEvent) => {
    const { call, request } = (message.data ?? {}) as Partial<Call>;
    if (typeof call !== "number" || !request) return;
    behaviour(request).then(
      (result) => port?.postMessage({ call, ok: true, result } satisfies Answer),
      (error: unknown) => port?.postMessage({ call, ok: false, error: errorInfo(error) } satisfies Answer),
    );
  };
  const ready: Ready = { svc: "elements-ready", id: hello.id };
  window.parent.postMessage(ready, event.origin);
});

class ApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly problem?: unknown,
  ) {
    super(message);
  }
}

function errorInfo(error: unknown) {
  if (error instanceof ApiError)
    return {
      message: error.message,
      ...(error.status ? { status: error.status, problem: error.problem } : {}),
    };
  return { message: error instanceof Error ? error.message : "The request failed." };
}

// ---- Siblings: other frames of this page made for this frame's key (read directly, never through the page). ----
/** The SHA-256 of the key this page was made for (`k`): its siblings are the frames made for the same key. */
const ownKeyHash = new URLSearchParams(location.search).get("k");

/**
 * Reads the page's frames of this origin, path and key. Another tenant's frames are on the same origin too (a
 * skimmer on the merchant's page can mount one made for its own key, whose application lists the merchant's
 * origin): reading them would hand the merchant's typed card to the skimmer's tenant.
 */
function siblings<T>(pick: (w: Window) => T | undefined): T[] {
  const found: T[] = [];
  const frames = window.parent.frames;
  for (let i = 0; i < frames.length; i++) {
    try {
      const w = frames[i] as Window;
      const sameKey =
        ownKeyHash !== null &&
        w.location.pathname === location.pathname &&
        new URLSearchParams(w.location.search).get("k") === ownKeyHash;
      if (!sameKey) continue;
      const value = pick(w);
      if (value) found.push(value);
    } catch {
      // A frame of another origin: not ours.
    }
  }
  return found;
}

/**
 * What a page may send with a create: the fields that never render the data into the answer the page gets. The
 * others are expressions evaluated on the data (a mask is shown in the masked answer, and an id expression such as
 * `x{{ data.number }}` came back whole as the token's id): a page may not set them; its back end may, with its own
 * key. Listed, not refused by name, so that a field the API learns later is refused until it is known safe here.
 */
const PAGE_FIELDS = new Set([
  "type",
  "data",
  "containers",
  "metadata",
  "expires_at",
  "deduplicate_token",
  "id",
]);

/** What a value typed into an element holds, leaf by leaf, as it would read in an answer's JSON. */
function typedLeaves(value: unknown, depth: number): string[] {
  if (value !== null && typeof value === "object" && depth < 8)
    return Object.values(value).flatMap((inner) => typedLeaves(inner, depth + 1));
  return typeof value === "string" || typeof value === "number"
    ? [JSON.stringify(value).replace(/^"|"$/g, "")]
    : [];
}

/** What of an element's value is secret at any length: all of it but the expiry (a card's number and cvc). */
function secretPart(role: string, value: unknown): unknown {
  if (role === "cardExpirationDate") return undefined;
  if (role === "card" && value !== null && typeof value === "object") {
    const { number, cvc } = value as { number?: unknown; cvc?: unknown };
    return [number, cvc];
  }
  return value;
}

/** The SHA-256 of a key, in hex: what the page's `k` (and so its CSP's frame-ancestors) was made for. */
async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---- The controller: holds the key (in memory only) and calls the API. ----
function controller(): (request: Request) => Promise<unknown> {
  let apiKey: string | undefined;
  const revealed = new Map<string, unknown>();
  window.svcController = { resolve: (ref) => (revealed.has(ref) ? revealed.get(ref) : undefined) };

  // The API is where the vault serves this page from: <base>/elements/v1/frame.html.
  const apiBase = new URL("../../", location.href);
  const api = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(new URL(path, apiBase), {
      method,
      headers: {
        "svc-api-key": key,
        // The API sees this call as same-origin: it checks the page's origin against the key's instead.
        "svc-elements-origin": parentOrigin ?? "null",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      credentials: "omit",
      cache: "no-store",
    });
    const answer: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const detail = (answer as { detail?: unknown } | undefined)?.detail;
      throw new ApiError(
        typeof detail === "string" ? detail : `The API answered ${res.status}.`,
        res.status,
        answer,
      );
    }
    return answer;
  };

  /** `value` with each element replaced by what was typed into it; each such value is added to `typed`. */
  const resolveLeaves = (
    value: unknown,
    leaf: string | undefined,
    depth: number,
    typed: string[],
    secret: string[],
  ): unknown => {
    if (depth > 8) throw new Error("The token data nests too deeply.");
    if (value && typeof value === "object" && !Array.isArray(value)) {
      const marker = (value as { __svcElement?: unknown }).__svcElement;
      if (typeof marker === "string") {
        const handle = siblings((w) => (w.svcElement?.id === marker ? w.svcElement : undefined))[0];
        if (!handle) throw new Error("An element of the request is not mounted.");
        const got = handle.valueFor(leaf);
        if ("error" in got) throw new Error(got.error);
        typed.push(...typedLeaves(got.value, 0));
        secret.push(...typedLeaves(secretPart(handle.role, got.value), 0).filter((leaf) => leaf !== ""));
        return got.value;
      }
      const out: Record<string, unknown> = {};
      for (const [name, inner] of Object.entries(value))
        out[name] = resolveLeaves(inner, name, depth + 1, typed, secret);
      return out;
    }
    if (Array.isArray(value))
      return value.map((inner) => resolveLeaves(inner, leaf, depth + 1, typed, secret));
    return value;
  };

  const refer = (value: unknown, depth: number): unknown => {
    if (depth > 8) return undefined;
    if (value === null || value === undefined) return value;
    if (typeof value === "object") {
      if (Array.isArray(value)) return value.map((inner) => refer(inner, depth + 1));
      return Object.fromEntries(
        Object.entries(value).map(([name, inner]) => [name, refer(inner, depth + 1)]),
      );
    }
    const bytes = crypto.getRandomValues(new Uint8Array(18));
    const ref = `svcref_${btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")}`;
    revealed.set(ref, value);
    return ref;
  };

  return async (request) => {
    switch (request.kind) {
      case "init":
        // This page's CSP lets only the origins of the key `k` names embed it: another key (a page of another
        // tenant passing a merchant's public key) would call the API from the vault's origin past that key's
        // allowed_origins.
        if ((await sha256Hex(request.apiKey)) !== new URLSearchParams(location.search).get("k"))
          throw new Error("This frame was made for another key.");
        apiKey = request.apiKey;
        return undefined;
      case "create": {
        if (!apiKey) throw new Error("Elements are not initialised.");
        // Expressions over the data would render it into the answer the page gets (a mask is shown in masked
        // answers): a page may not set them; its back end may, with its own key.
        const refused = Object.keys(request.body).filter((field) => !PAGE_FIELDS.has(field));
        const { id } = request.body;
        if (id !== undefined && (typeof id !== "string" || /\{[{%]/.test(id)))
          refused.push("an id expression");
        if (refused.length)
          throw new Error(`${refused.join(", ")} cannot be set from a page; set it from your back end.`);
        const typed: string[] = [];
        const secret: string[] = [];
        const data = resolveLeaves(request.body.data, undefined, 0, typed, secret);
        const answer = await api("POST", "tokens", apiKey, { ...request.body, data });
        // A type whose mask shows a value whole (a routing number's `{{ data }}`), chosen by a script on the page
        // for a text element, would hand it what was typed: an answer holding a typed value of five characters or
        // more goes to the page without its `data` (a card's masked number and expiry still go). A shorter one
        // (a cvc, 3–4 digits) goes without it too when a leaf of the data is that value (a public key's rule that
        // reveals on create showed a cvc tokenized alone: front-end review, 28 Nov 2026); expiry is never secret.
        const text = JSON.stringify(answer);
        const shown = typedLeaves((answer as { data?: unknown } | undefined)?.data, 0);
        if (
          !typed.some((value) => value.length >= 5 && text.includes(value)) &&
          !secret.some((value) => shown.includes(value))
        )
          return answer;
        const { data: _shown, ...rest } = answer as Record<string, unknown>;
        return rest;
      }
      case "retrieve": {
        const key = request.apiKey ?? apiKey;
        if (!key) throw new Error("Elements are not initialised.");
        if (!/^[A-Za-z0-9_-]{1,200}$/.test(request.id)) throw new Error("The token id is invalid.");
        const token = (await api("GET", `tokens/${encodeURIComponent(request.id)}`, key)) as Record<
          string,
          unknown
        >;
        // Every data leaf stays here; the page gets references that a `text` frame can show.
        return { ...token, data: refer(token.data, 0) };
      }
      default:
        throw new Error("The controller frame does not do that.");
    }
  };
}

// ---- Elements: the inputs. ----
const DEFAULT_LABELS = { number: "Card number", expiry: "Expiration date", cvc: "Security code" };
const DEFAULT_PLACEHOLDERS = { number: "1234 1234 1234 1234", expiry: "MM / YY", cvc: "CVC" };
const SAFE_STYLE_VALUE = /^[#(),.%\w\s'"-]{1,100}$/;

const cssName = (property: string) => property.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function applyStyle(target: HTMLElement, rules: StyleRules | undefined, prefix: string): void {
  for (const property of STYLE_PROPERTIES) {
    const value = rules?.[property];
    // Fonts and colours only: no url() (CSP allows no images or fonts from elsewhere anyway).
    if (typeof value !== "string" || !SAFE_STYLE_VALUE.test(value) || /url\s*\(/i.test(value)) continue;
    target.style.setProperty(`--svc-${prefix}-${cssName(property)}`, value);
  }
}

function styleFrame(style: ElementStyle | undefined): void {
  const root = document.documentElement;
  applyStyle(root, style?.base, "base");
  applyStyle(root, style?.invalid, "invalid");
  applyStyle(root, style?.focus, "focus");
}

interface Field {
  name: "number" | "expiry" | "cvc" | "text";
  input: HTMLInputElement;
  error: HTMLElement;
  touched: boolean;
  check(): FieldCheck;
}

function field(
  container: HTMLElement,
  name: Field["name"],
  attributes: { label: string; placeholder: string; autocomplete: string; inputMode?: string },
): Omit<Field, "check"> {
  const wrapper = document.createElement("div");
  wrapper.className = `field field-${name}`;
  const label = document.createElement("label");
  const input = document.createElement("input");
  const error = document.createElement("div");
  input.id = `svc-${name}`;
  input.name =
    name === "expiry" ? "cc-exp" : name === "cvc" ? "cc-csc" : name === "number" ? "cc-number" : "text";
  input.type = "text";
  input.setAttribute("autocomplete", attributes.autocomplete);
  input.placeholder = attributes.placeholder;
  input.spellcheck = false;
  if (attributes.inputMode) input.inputMode = attributes.inputMode;
  input.setAttribute("aria-invalid", "false");
  input.setAttribute("aria-describedby", `svc-${name}-error`);
  label.htmlFor = input.id;
  label.textContent = attributes.label;
  error.id = `svc-${name}-error`;
  error.className = "error";
  error.setAttribute("role", "alert");
  wrapper.append(label, input, error);
  container.append(wrapper);
  return { name, input, error, touched: false };
}

function labelOf(options: ElementOptions, name: "number" | "expiry" | "cvc", fallback: string): string {
  if (typeof options.label === "string") return options.label;
  return options.label?.[name] ?? fallback;
}
function placeholderOf(options: ElementOptions, name: "number" | "expiry" | "cvc"): string {
  if (typeof options.placeholder === "string") return options.placeholder;
  return options.placeholder?.[name] ?? DEFAULT_PLACEHOLDERS[name];
}

function element(
  role: FrameRole,
  id: string,
  options: ElementOptions,
): (request: Request) => Promise<unknown> {
  const type = role as ElementType;
  styleFrame(options.style);
  const form = document.createElement("div");
  form.className = `element element-${type}`;
  document.body.append(form);
  const fields: Field[] = [];
  const now = () => new Date();
  let numberDigits = "";

  const add = (name: "number" | "expiry" | "cvc") => {
    const base = field(form, name, {
      label: labelOf(options, name, DEFAULT_LABELS[name]),
      placeholder: placeholderOf(options, name),
      autocomplete: name === "number" ? "cc-number" : name === "expiry" ? "cc-exp" : "cc-csc",
      inputMode: "numeric",
    });
    const check =
      name === "number"
        ? () => checkNumber(base.input.value)
        : name === "expiry"
          ? () => checkExpiry(base.input.value, now())
          : () => checkCvc(base.input.value, numberDigits);
    const format =
      name === "number"
        ? formatNumber
        : name === "expiry"
          ? formatExpiry
          : (v: string) => formatCvc(v, numberDigits);
    const f: Field = { ...base, check };
    base.input.addEventListener("input", () => {
      const formatted = format(base.input.value);
      if (formatted !== base.input.value) base.input.value = formatted;
      if (name === "number") numberDigits = digitsOf(formatted);
      changed();
    });
    fields.push(f);
  };

  if (type === "card" || type === "cardNumber") add("number");
  if (type === "card" || type === "cardExpirationDate") add("expiry");
  if (type === "card" || type === "cardVerificationCode") add("cvc");
  if (type === "text") {
    const base = field(form, "text", {
      label: typeof options.label === "string" ? options.label : "Value",
      placeholder: typeof options.placeholder === "string" ? options.placeholder : "",
      autocomplete: options.autocomplete ?? "off",
    });
    const pattern = options.pattern ? safePattern(options.pattern) : undefined;
    const f: Field = {
      ...base,
      check: () => {
        const value = base.input.value;
        if (value.length === 0) return { empty: true, complete: false, valid: false };
        // A revealed value (setValue) is never tested: the verdict would reach the page, a bit per pattern.
        if (pattern && !base.input.readOnly && !pattern.test(value))
          return { empty: false, complete: true, valid: false, error: "The value is invalid." };
        return { empty: false, complete: true, valid: true };
      },
    };
    base.input.addEventListener("input", () => changed());
    fields.push(f);
  }
  for (const f of fields) {
    f.input.disabled = options.disabled === true;
    f.input.addEventListener("blur", () => {
      f.touched = true;
      changed();
      emit({ event: "blur" });
    });
    f.input.addEventListener("focus", () => emit({ event: "focus" }));
  }

  /**
   * A field's check as the page may learn it, by change events or by the answer to a create it asks for: a
   * provisional number (FieldCheck.provisional) is incomplete until its field is left, whatever its Luhn check (a
   * create asked for at 13 typed digits answered "created" or "invalid": review round 10).
   */
  const toldCheck = (f: Field): FieldCheck => {
    const c = f.check();
    return c.provisional && !f.touched
      ? { empty: false, complete: false, valid: false, error: "The card number is incomplete." }
      : c;
  };

  let lastState = "";
  function changed(): void {
    const checks = fields.map((f) => ({ f, c: toldCheck(f) }));
    for (const { f, c } of checks) {
      // Shown once the field is left or complete, so typing is not interrupted by "incomplete".
      const show = Boolean(c.error) && (f.touched || c.complete);
      f.input.setAttribute("aria-invalid", show ? "true" : "false");
      f.input.classList.toggle("invalid", show);
      f.error.textContent = show ? (c.error ?? "") : "";
    }
    const errors = checks
      .filter(({ f, c }) => c.error && (f.touched || c.complete))
      .map(({ f, c }) => ({ field: f.name, message: c.error as string }));
    const brand = fields.some((f) => f.name === "number") ? checkNumber(numberDigits).brand : undefined;
    const payload: ChangeEvent = {
      complete: checks.every(({ c }) => c.complete && c.valid),
      empty: checks.every(({ c }) => c.empty),
      valid: checks.every(({ c }) => c.valid),
      ...(errors.length ? { errors } : {}),
      ...(brand ? { cardBrand: brand } : {}),
    };
    const state = JSON.stringify(payload);
    if (state !== lastState) {
      lastState = state;
      emit({ event: "change", payload });
    }
  }

  const fieldValue = (name: Field["name"]) => fields.find((f) => f.name === name);
  const refuse = (f: Field): string | undefined => {
    const c = toldCheck(f);
    if (c.valid) return undefined;
    // A number still being typed stays so: touched, its next change event would tell its Luhn check.
    if (!f.check().provisional) f.touched = true;
    return (
      c.error ??
      (c.empty
        ? `The ${f.name === "expiry" ? "expiration date" : f.name} is required.`
        : "The value is invalid.")
    );
  };

  window.svcElement = {
    id,
    role: type,
    valueFor(leaf) {
      const problems = fields.map(refuse).filter((e): e is string => Boolean(e));
      if (problems.length) {
        changed();
        return { error: problems[0] as string };
      }
      const number = fieldValue("number");
      const expiry = fieldValue("expiry");
      const cvc = fieldValue("cvc");
      const parsed = expiry ? parseExpiry(expiry.input.value) : undefined;
      switch (type) {
        case "card":
          return {
            value: {
              number: digitsOf(number?.input.value ?? ""),
              expiration_month: parsed?.month,
              expiration_year: parsed?.year,
              cvc: digitsOf(cvc?.input.value ?? ""),
            },
          };
        case "cardNumber":
          return { value: digitsOf(number?.input.value ?? "") };
        case "cardVerificationCode":
          return { value: digitsOf(cvc?.input.value ?? "") };
        case "cardExpirationDate":
          if (leaf === "expiration_month") return { value: parsed?.month };
          if (leaf === "expiration_year") return { value: parsed?.year };
          return { value: { expiration_month: parsed?.month, expiration_year: parsed?.year } };
        default:
          return { value: fieldValue("text")?.input.value ?? "" };
      }
    },
  };

  new ResizeObserver(() => emit({ event: "resize", height: Math.ceil(document.body.scrollHeight) })).observe(
    document.body,
  );
  changed();

  return async (request) => {
    switch (request.kind) {
      case "setValue": {
        const text = fieldValue("text");
        if (!text) throw new Error("Only a text element shows revealed values.");
        if (!isRefString(request.ref)) throw new Error("setValue takes a reference from tokens.retrieve.");
        const value = siblings((w) => {
          const resolved = w.svcController?.resolve(request.ref);
          return resolved === undefined ? undefined : { resolved };
        })[0];
        if (!value) throw new Error("The reference is unknown here.");
        text.input.value = String(value.resolved);
        text.input.readOnly = true;
        changed();
        return undefined;
      }
      case "clear":
        for (const f of fields) {
          f.input.value = "";
          f.input.readOnly = false;
          f.touched = false;
        }
        numberDigits = "";
        changed();
        return undefined;
      case "focus":
        fields[0]?.input.focus();
        return undefined;
      case "update":
        styleFrame(request.options.style);
        return undefined;
      default:
        throw new Error("An element does not do that.");
    }
  };
}

/** A text element's pattern, anchored; an invalid one is ignored rather than refusing every value. */
function safePattern(source: string): RegExp | undefined {
  if (source.length > 200) return undefined;
  try {
    return new RegExp(`^(?:${source})$`, "u");
  } catch {
    return undefined;
  }
}
