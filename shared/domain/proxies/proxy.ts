import { Script } from "node:vm";
import {
  type ConfigurationAtRest,
  configurationBinding,
  openConfiguration,
  sealForStore,
} from "#shared/domain/crypto/sealed-configuration.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";

export interface ProxyTransform {
  code: string;
}

/** What a proxy's sealed key is bound to: its tenant, its id and the field. */
export const proxyKeyBinding = (proxy: Pick<StoredProxy, "tenant_id" | "id">) => ({
  tenantId: proxy.tenant_id,
  tokenId: proxy.id,
  field: "proxy_key",
});

/** What a proxy's sealed configuration is bound to: its tenant, its id and the field. */
export const proxyConfigurationBinding = (proxy: Pick<StoredProxy, "tenant_id" | "id">) =>
  configurationBinding("proxy", proxy.tenant_id, proxy.id);

/**
 * A proxy as stored: its key only sealed (shown to managers) and hashed (to find the proxy by it), its
 * configuration only sealed (`sealed_configuration`; a plain `configuration` only on items written before that,
 * crypto/sealed-configuration.ts).
 */
export interface StoredProxy extends ConfigurationAtRest {
  id: string;
  tenant_id: string;
  name: string;
  destination_url: string;
  require_auth: boolean;
  request_transform?: ProxyTransform;
  response_transform?: ProxyTransform;
  application_id?: string;
  /** Where the transforms' `fetch` may go (docs/proxies.md); absent: anywhere the address rule allows. */
  allowed_hosts?: string[];
  sealed_key: string;
  key_hash: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** What is written: never a plain configuration. */
export type ProxyToStore = StoredProxy & { configuration?: never };

/** A proxy with its configuration opened: what the use cases work with, never stored as it is. */
export type OpenedProxy = Omit<StoredProxy, "sealed_configuration">;

export async function openProxy(sealer: Pick<Sealer, "open">, proxy: StoredProxy): Promise<OpenedProxy> {
  const { sealed_configuration: _sealed, configuration: _plain, ...fields } = proxy;
  const configuration = await openConfiguration(sealer, proxyConfigurationBinding(proxy), proxy);
  return { ...fields, ...(configuration !== undefined ? { configuration } : {}) };
}

export async function sealProxy(sealer: Pick<Sealer, "seal">, proxy: OpenedProxy): Promise<ProxyToStore> {
  const { configuration, ...fields } = proxy;
  return sealForStore(sealer, "proxy", proxyConfigurationBinding(proxy), fields, configuration);
}

/** What the proxy's transforms read as `configuration`: it opened (`{}` for none). */
export async function proxyConfiguration(
  sealer: Pick<Sealer, "open">,
  proxy: StoredProxy,
): Promise<Record<string, unknown>> {
  return (await openConfiguration(sealer, proxyConfigurationBinding(proxy), proxy)) ?? {};
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

/**
 * `name` search (proxies, reactors): `*` is a wildcard (anchored, case-insensitive); without one, a
 * case-insensitive substring. A glob of `*` alone needs no backtracking: the text before the first `*` must
 * start the name, the text after the last must end it, and each piece between is found at its leftmost
 * place after the previous one. Each piece is searched once, so a search costs at most name length times
 * pattern length (never the exponential time a `.*` regex takes on `a*a*a*...`).
 */
export function nameMatcher(pattern: string): (name: string) => boolean {
  const lowered = pattern.toLowerCase();
  if (!lowered.includes("*")) return (name) => name.toLowerCase().includes(lowered);
  const parts = lowered.split("*");
  const first = parts[0] ?? "";
  const last = parts.at(-1) ?? "";
  const middle = parts.slice(1, -1).filter((part) => part !== "");
  return (raw) => {
    const name = raw.toLowerCase();
    if (name.length < first.length + last.length) return false;
    if (!name.startsWith(first) || !name.endsWith(last)) return false;
    const end = name.length - last.length;
    let from = first.length;
    for (const part of middle) {
      const at = name.indexOf(part, from);
      if (at < 0 || at + part.length > end) return false;
      from = at + part.length;
    }
    return true;
  };
}
