import { createHash } from "node:crypto";
import { originError } from "#shared/domain/origins.ts";

/** The frame page's stylesheet: every themable value is a custom property the `style` option sets. */
const FRAME_CSS = [
  "html,body{margin:0;padding:0;background:transparent}",
  "body{font-family:var(--svc-base-font-family,system-ui,-apple-system,'Segoe UI',Roboto,sans-serif);" +
    "font-size:var(--svc-base-font-size,16px);font-weight:var(--svc-base-font-weight,400);" +
    "font-style:var(--svc-base-font-style,normal);letter-spacing:var(--svc-base-letter-spacing,normal);" +
    "line-height:var(--svc-base-line-height,1.3);color:var(--svc-base-color,#1f2937)}",
  ".element{display:flex;flex-wrap:wrap;align-items:flex-end;gap:8px;padding:4px}",
  ".field{display:flex;flex-direction:column;flex:1 1 6em;min-width:6em}",
  ".field-number{flex:3 1 14em}",
  "label{font-size:.8em;margin:0 0 4px}",
  "input{font:inherit;color:inherit;letter-spacing:inherit;box-sizing:border-box;width:100%;" +
    "padding:var(--svc-base-padding,8px 10px);" +
    "border:var(--svc-base-border-width,1px) solid var(--svc-base-border-color,#c4c9d2);" +
    "border-radius:var(--svc-base-border-radius,6px);background:var(--svc-base-background-color,#fff);" +
    "caret-color:var(--svc-base-caret-color,auto)}",
  "input:focus{outline:2px solid var(--svc-focus-border-color,#2563eb);outline-offset:1px;" +
    "color:var(--svc-focus-color,inherit)}",
  "input::placeholder{color:var(--svc-base-placeholder-color,#8a94a6)}",
  "input.invalid{color:var(--svc-invalid-color,#b91c1c);border-color:var(--svc-invalid-border-color,#b91c1c)}",
  "input[readonly]{background:var(--svc-base-background-color,#f8fafc)}",
  ".error{min-height:1.25em;font-size:.75em;color:var(--svc-invalid-color,#b91c1c)}",
].join("");

const STYLE_HASH = `'sha256-${createHash("sha256").update(FRAME_CSS, "utf8").digest("base64")}'`;

export interface FramePage {
  html: string;
  contentSecurityPolicy: string;
}

/**
 * The Elements frame page for a key whose application lists `allowedOrigins`: only those pages may embed it
 * (CSP frame-ancestors; none → 'none'), it runs only the vault's own script, and it connects only to the API
 * (its own origin). The origins are also in a meta tag, where frame.js checks the handshake's origin.
 */
export function framePage(allowedOrigins: readonly string[]): FramePage {
  // Stored origins were validated on write; checked again because they end up in a header and in markup.
  const origins = allowedOrigins.filter((origin) => originError(origin) === undefined);
  const contentSecurityPolicy = [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${STYLE_HASH}`,
    "connect-src 'self'",
    `frame-ancestors ${origins.length ? origins.join(" ") : "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="svc-allowed-origins" content="${origins.join(" ")}">` +
    `<title>Secure input</title><style>${FRAME_CSS}</style>` +
    `<script src="frame.js" defer></script></head><body></body></html>`;
  return { html, contentSecurityPolicy };
}
