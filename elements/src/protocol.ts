/**
 * Messages between the page (elements.js) and the frames (frame.js). The handshake runs over
 * window.postMessage with origins checked on both sides; everything after it runs over the MessageChannel the
 * handshake handed to the frame. No message from a frame to the page ever holds a value typed or revealed.
 */

export const ELEMENT_TYPES = [
  "card",
  "cardNumber",
  "cardExpirationDate",
  "cardVerificationCode",
  "text",
] as const;
export type ElementType = (typeof ELEMENT_TYPES)[number];
/** The hidden frame that holds the key and calls the API (one per init). */
export type FrameRole = ElementType | "controller";

/** Properties a `style` option may set (anything else is ignored): fonts and colours, no URLs. */
export const STYLE_PROPERTIES = [
  "color",
  "backgroundColor",
  "fontFamily",
  "fontSize",
  "fontWeight",
  "fontStyle",
  "letterSpacing",
  "lineHeight",
  "padding",
  "borderColor",
  "borderRadius",
  "borderWidth",
  "caretColor",
  "placeholderColor",
] as const;
export type StyleProperty = (typeof STYLE_PROPERTIES)[number];
export type StyleRules = Partial<Record<StyleProperty, string>>;
export interface ElementStyle {
  base?: StyleRules;
  invalid?: StyleRules;
  focus?: StyleRules;
}

export interface ElementOptions {
  style?: ElementStyle;
  /** Placeholder text per input (card: number, expiry, cvc). */
  placeholder?: string | { number?: string; expiry?: string; cvc?: string };
  /** Visible labels (default English). */
  label?: string | { number?: string; expiry?: string; cvc?: string };
  /** text: the input's `autocomplete` value (default "off"). */
  autocomplete?: string;
  /** text: a value the frame refuses unless it matches (a RegExp source, anchored). */
  pattern?: string;
  disabled?: boolean;
}

/** Page → frame, over window.postMessage to the vault's origin, with the channel's port transferred. */
export interface Hello {
  svc: "elements-hello";
  id: string;
  role: FrameRole;
  options: ElementOptions;
}

/** Frame → page, over window.postMessage to the page's origin, once the port is taken. */
export interface Ready {
  svc: "elements-ready";
  id: string;
}

export interface ChangeEvent {
  complete: boolean;
  empty: boolean;
  valid: boolean;
  /** One per field in error: what is wrong, never the value. */
  errors?: { field: string; message: string }[];
  cardBrand?: string;
}

/** A leaf of a token request's data that is an element: replaced by its value inside the controller frame. */
export interface ElementLeaf {
  __svcElement: string;
}

export type Request =
  | { kind: "init"; apiKey: string }
  | {
      kind: "create";
      body: Record<string, unknown>;
    }
  | { kind: "retrieve"; id: string; apiKey?: string }
  | { kind: "setValue"; ref: string }
  | { kind: "clear" }
  | { kind: "focus" }
  | { kind: "update"; options: ElementOptions };

/** Over the port: a request with its id, answered once. */
export interface Call {
  call: number;
  request: Request;
}
export type Answer =
  | { call: number; ok: true; result?: unknown }
  | { call: number; ok: false; error: ErrorInfo };
export interface ErrorInfo {
  message: string;
  status?: number;
  /** The API's problem+json, as answered (never holds data). */
  problem?: unknown;
}

/** Frame → page events over the port. */
export type FrameEvent =
  | { event: "change"; payload: ChangeEvent }
  | { event: "focus" | "blur" | "ready" }
  | { event: "resize"; height: number };

/** What a sibling element frame offers the controller frame (same origin: read directly, never posted). */
export interface ElementHandle {
  id: string;
  role: ElementType;
  /** The element's value for a leaf named `leaf` (card: the whole card object), or an error message. */
  valueFor(leaf: string | undefined): { value: unknown } | { error: string };
}

/** What the controller frame offers the element frames of the same page. */
export interface ControllerHandle {
  /** The value an opaque reference stands for (a `text` frame shows it). */
  resolve(ref: string): unknown;
}

export const isRefString = (value: unknown): value is string =>
  typeof value === "string" && /^svcref_[A-Za-z0-9_-]{22,}$/.test(value);
