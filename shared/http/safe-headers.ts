/**
 * Node's HTTP parser collects a message's `headers` and `trailers` on ORDINARY objects
 * (IncomingMessage.prototype._addHeaderLine writes `dest[field]`). Under --disable-proto=throw, which every
 * host process of this service runs with, a header line named `__proto__` makes that write throw inside
 * the parser: an uncaught exception that stops the whole process (every tenant's requests, the local
 * server, a warm Lambda instance). The line can come from either side: a caller's request (server side) or
 * a destination's / callback receiver's response (client side: proxies and reactor callbacks).
 *
 * Importing this module patches IncomingMessage.prototype once, process-wide, so that both sides drop a
 * `__proto__` header line (no protocol defines one) and keep every other line as Node would. It covers
 * every IncomingMessage, server and client, `headers`, `trailers`, `headersDistinct` and
 * `trailersDistinct` alike. Checked against Node 20 (local) and Node 24 (Lambda, nodejs/node lib/
 * _http_incoming.js): both define `_addHeaderLine(field, value, dest)` and `_addHeaderLineDistinct`.
 *
 * Imported by every entry point: the local gateway, createHttpHandler (every HTTP Lambda), the outbound
 * forward module (proxies and reactor callbacks) and the sandbox runner.
 */
import { IncomingMessage } from "node:http";
import { isForbiddenHeaderName } from "#shared/domain/safe-keys.ts";

type AddHeaderLine = (this: IncomingMessage, field: string, value: string, dest: object) => void;

/** The IncomingMessage methods that write one header line into a headers/trailers object. */
export const HEADER_LINE_METHODS = ["_addHeaderLine", "_addHeaderLineDistinct"] as const;

const PATCHED = Symbol.for("svc-vault.safe-headers");

/** Patch IncomingMessage.prototype (idempotent). Returns the names of the methods that are patched. */
export function installSafeHeaders(): string[] {
  const prototype = IncomingMessage.prototype as unknown as Record<string | symbol, unknown>;
  const patched: string[] = [];
  for (const method of HEADER_LINE_METHODS) {
    const original = prototype[method] as (AddHeaderLine & { [PATCHED]?: true }) | undefined;
    if (typeof original !== "function") continue;
    if (original[PATCHED]) {
      patched.push(method);
      continue;
    }
    const safe = Object.assign(
      function (this: IncomingMessage, field: string, value: string, dest: object) {
        if (typeof field === "string" && isForbiddenHeaderName(field)) return;
        original.call(this, field, value, dest);
      },
      { [PATCHED]: true as const },
    );
    const descriptor = Object.getOwnPropertyDescriptor(prototype, method);
    Object.defineProperty(prototype, method, {
      writable: true,
      configurable: true,
      ...descriptor,
      value: safe,
    });
    patched.push(method);
  }
  return patched;
}

installSafeHeaders();
