/**
 * elements.js: the page's side of Elements, served by the vault at BASE/elements/v1/elements.js and exposed as
 * the global `SvcElements`. It mounts frames served from the vault's origin and talks to them over one
 * MessageChannel each, after a handshake whose origins both sides check. The key stays in memory (here and in
 * the hidden controller frame); no value typed or revealed ever reaches this page.
 */
import {
  type Answer,
  type Call,
  type ChangeEvent,
  ELEMENT_TYPES,
  type ElementLeaf,
  type ElementOptions,
  type ElementType,
  type FrameEvent,
  type FrameRole,
  type Hello,
  type Ready,
  type Request,
} from "./protocol.ts";

export interface InitOptions {
  /** A public key (key_pub_…) or a session key (key_ses_…): never a private or management key. */
  apiKey: string;
  /** The vault's base URL, e.g. https://vault.example.com. */
  baseUrl: string;
  /** How long a frame may take to answer its handshake (ms, default 10000). */
  timeoutMs?: number;
}

type Listener = (payload?: ChangeEvent) => void;

const BROWSER_KEY = /^key_(?:pub|ses)_[A-Za-z0-9_-]{16,200}$/;

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(text: string): Promise<string> {
  if (!crypto.subtle) throw new Error("Elements need a secure context (https, or http://localhost).");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** One frame and its channel. */
class FrameLink {
  readonly id = randomId();
  iframe: HTMLIFrameElement | undefined;
  private port: MessagePort | undefined;
  private calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextCall = 1;
  onEvent: (event: FrameEvent) => void = () => undefined;

  constructor(
    private readonly frameUrl: string,
    private readonly vaultOrigin: string,
    readonly role: FrameRole,
    private readonly options: ElementOptions,
    private readonly timeoutMs: number,
  ) {}

  async mount(container: HTMLElement, hidden: boolean): Promise<void> {
    const iframe = document.createElement("iframe");
    iframe.src = this.frameUrl;
    iframe.title = hidden ? "Secure connection" : this.role === "text" ? "Secure field" : "Secure card input";
    iframe.setAttribute("frameborder", "0");
    iframe.setAttribute("scrolling", "no");
    iframe.setAttribute("allowtransparency", "true");
    iframe.style.cssText = hidden
      ? "position:absolute;width:0;height:0;border:0;visibility:hidden"
      : "width:100%;border:0;display:block;height:0;overflow:hidden";
    if (hidden) {
      iframe.setAttribute("aria-hidden", "true");
      iframe.tabIndex = -1;
    }
    this.iframe = iframe;
    const loaded = new Promise<void>((resolve) =>
      iframe.addEventListener("load", () => resolve(), { once: true }),
    );
    container.append(iframe);
    await loaded;

    const channel = new MessageChannel();
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        window.removeEventListener("message", listen);
        reject(
          new Error(
            "The Elements frame did not answer: is this page's origin in the application's allowed_origins?",
          ),
        );
      }, this.timeoutMs);
      const listen = (event: MessageEvent) => {
        // Only the frame we created, only from the vault's origin, only for this element.
        if (event.source !== iframe.contentWindow || event.origin !== this.vaultOrigin) return;
        const data = event.data as Partial<Ready> | null;
        if (data?.svc !== "elements-ready" || data.id !== this.id) return;
        clearTimeout(timer);
        window.removeEventListener("message", listen);
        resolve();
      };
      window.addEventListener("message", listen);
    });
    const hello: Hello = { svc: "elements-hello", id: this.id, role: this.role, options: this.options };
    // Delivered only if the frame's document is still the vault's: the port never reaches another origin.
    iframe.contentWindow?.postMessage(hello, this.vaultOrigin, [channel.port2]);
    this.port = channel.port1;
    this.port.onmessage = (event: MessageEvent) => this.receive(event.data);
    await ready;
  }

  private receive(data: unknown): void {
    const answer = data as Partial<Answer> & Partial<FrameEvent>;
    if (typeof answer.call === "number") {
      const pending = this.calls.get(answer.call);
      if (!pending) return;
      this.calls.delete(answer.call);
      if (answer.ok) pending.resolve(answer.result);
      else {
        const info = (answer as { error?: { message?: string; status?: number; problem?: unknown } }).error;
        pending.reject(Object.assign(new Error(info?.message ?? "The request failed."), info ?? {}));
      }
      return;
    }
    if (typeof answer.event === "string") {
      const event = answer as FrameEvent;
      if (event.event === "resize" && this.iframe && this.role !== "controller")
        this.iframe.style.height = `${Math.min(Math.max(event.height, 0), 2000)}px`;
      this.onEvent(event);
    }
  }

  call(request: Request): Promise<unknown> {
    if (!this.port) return Promise.reject(new Error("The element is not mounted."));
    const call = this.nextCall++;
    const message: Call = { call, request };
    return new Promise((resolve, reject) => {
      this.calls.set(call, { resolve, reject });
      this.port?.postMessage(message);
    });
  }

  destroy(): void {
    this.port?.close();
    this.iframe?.remove();
    this.port = undefined;
    for (const pending of this.calls.values()) pending.reject(new Error("The element was unmounted."));
    this.calls.clear();
  }
}

const elementIds = new WeakMap<object, string>();

/** An element: its frame's inputs live on the vault's origin; this object only relays states and commands. */
export class SvcElement {
  private readonly listeners = new Map<string, Set<Listener>>();
  private mounted = false;

  constructor(
    private readonly link: FrameLink,
    readonly type: ElementType,
  ) {
    elementIds.set(this, link.id);
    link.onEvent = (event) => {
      if (event.event === "resize") return;
      const payload = event.event === "change" ? event.payload : undefined;
      for (const listener of this.listeners.get(event.event) ?? []) listener(payload);
    };
  }

  /** Resolves once the frame is ready (its handshake done). */
  async mount(target: string | HTMLElement): Promise<void> {
    if (this.mounted) throw new Error("The element is already mounted.");
    const container = typeof target === "string" ? document.querySelector<HTMLElement>(target) : target;
    if (!container) throw new Error(`No element matches ${String(target)}.`);
    this.mounted = true;
    await this.link.mount(container, false);
    for (const listener of this.listeners.get("ready") ?? []) listener();
  }

  /** "change" ({complete, empty, valid, errors?, cardBrand?}), "focus", "blur", "ready". */
  on(event: "change" | "focus" | "blur" | "ready", listener: Listener): this {
    const set = this.listeners.get(event) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(event, set);
    return this;
  }

  off(event: string, listener: Listener): this {
    this.listeners.get(event)?.delete(listener);
    return this;
  }

  /** Shows a revealed value (a reference from tokens.retrieve) inside this `text` element's frame. */
  async setValue(ref: string): Promise<void> {
    await this.link.call({ kind: "setValue", ref });
  }

  async clear(): Promise<void> {
    await this.link.call({ kind: "clear" });
  }

  async focus(): Promise<void> {
    await this.link.call({ kind: "focus" });
  }

  async update(options: ElementOptions): Promise<void> {
    await this.link.call({ kind: "update", options });
  }

  unmount(): void {
    this.link.destroy();
    this.mounted = false;
  }
}

/** Replaces each element in `data` by a marker the controller frame resolves inside the vault's origin. */
function markElements(value: unknown, depth = 0): unknown {
  if (depth > 8) throw new Error("The token data nests too deeply.");
  if (value instanceof SvcElement) {
    const leaf: ElementLeaf = { __svcElement: elementIds.get(value) as string };
    return leaf;
  }
  if (Array.isArray(value)) return value.map((inner) => markElements(inner, depth + 1));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, markElements(v, depth + 1)]));
  return value;
}

export interface Svc {
  createElement(type: ElementType, options?: ElementOptions): SvcElement;
  tokens: {
    /** POST /tokens from the vault's frame; answers as POST /tokens answers this key (masked for a public key). */
    create(request: { type: string; data: unknown; [field: string]: unknown }): Promise<unknown>;
    /** GET /tokens/{id} from the vault's frame: every data leaf is an opaque reference for setValue. */
    retrieve(id: string, options?: { apiKey?: string }): Promise<unknown>;
  };
}

export async function init(options: InitOptions): Promise<Svc> {
  if (typeof options?.apiKey !== "string" || !BROWSER_KEY.test(options.apiKey))
    throw new Error("SvcElements.init takes a public or session key: never put a private key in a page.");
  const base = new URL(options.baseUrl);
  if (base.protocol !== "https:" && base.protocol !== "http:") throw new Error("baseUrl must be http(s).");
  const prefix = `${base.origin}${base.pathname.replace(/\/+$/, "")}/elements/v1`;
  const frameUrl = `${prefix}/frame.html?k=${await sha256Hex(options.apiKey)}`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const link = (role: FrameRole, elementOptions: ElementOptions) =>
    new FrameLink(frameUrl, base.origin, role, elementOptions, timeoutMs);

  const controller = link("controller", {});
  await controller.mount(document.body, true);
  await controller.call({ kind: "init", apiKey: options.apiKey });

  return {
    createElement(type, elementOptions = {}) {
      if (!ELEMENT_TYPES.includes(type)) throw new Error(`Unknown element type ${String(type)}.`);
      return new SvcElement(link(type, elementOptions), type);
    },
    tokens: {
      create: (request) =>
        controller.call({ kind: "create", body: { ...request, data: markElements(request.data) } }),
      retrieve: (id, retrieveOptions = {}) => {
        if (retrieveOptions.apiKey !== undefined && !BROWSER_KEY.test(retrieveOptions.apiKey))
          return Promise.reject(new Error("tokens.retrieve takes a session key."));
        return controller.call({
          kind: "retrieve",
          id,
          ...(retrieveOptions.apiKey ? { apiKey: retrieveOptions.apiKey } : {}),
        });
      },
    },
  };
}
