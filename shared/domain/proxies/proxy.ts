import { Script } from "node:vm";

export interface ProxyTransform {
  code: string;
}

/** A proxy as stored: its key only sealed (shown to managers) and hashed (to find the proxy by it). */
export interface StoredProxy {
  id: string;
  tenant_id: string;
  name: string;
  destination_url: string;
  require_auth: boolean;
  request_transform?: ProxyTransform;
  response_transform?: ProxyTransform;
  application_id?: string;
  configuration?: Record<string, unknown>;
  sealed_key: string;
  key_hash: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** Destination URL rules: http(s) only, no credentials; https only where private destinations are refused. */
export function destinationError(url: string, options: { requireHttps: boolean }): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "must use http or https";
  if (options.requireHttps && parsed.protocol !== "https:") return "must use https";
  if (parsed.username || parsed.password) return "must not carry credentials";
  return undefined;
}

/** Transform code must at least compile as a CommonJS module body; it is never run here. */
export function transformCodeError(code: string): string | undefined {
  try {
    new Script(`(function (module, exports, require) {\n${code}\n})`, { filename: "transform.js" });
    return undefined;
  } catch (error) {
    return error instanceof SyntaxError ? `does not compile: ${error.message}` : "does not compile";
  }
}

/** `name` search: `*` is a wildcard (anchored, case-insensitive); without one, a case-insensitive substring. */
export function nameMatcher(pattern: string): (name: string) => boolean {
  const lowered = pattern.toLowerCase();
  if (!lowered.includes("*")) return (name) => name.toLowerCase().includes(lowered);
  const regex = new RegExp(
    `^${lowered
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return (name) => regex.test(name.toLowerCase());
}
