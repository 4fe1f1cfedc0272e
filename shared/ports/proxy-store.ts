import type { LogEntry } from "#shared/domain/audit.ts";
import type { ProxyToStore, StoredProxy } from "#shared/domain/proxies/proxy.ts";

/**
 * What a rewrap or a key rotation writes: the proxy's sealed key and, when given, its sealed configuration (which
 * then replaces a plain map of an older item).
 */
export type ProxySeals = Pick<StoredProxy, "sealed_key" | "sealed_configuration">;

export interface ProxyStore {
  create(proxy: ProxyToStore, audit: LogEntry): Promise<void>;
  get(tenantId: string, id: string): Promise<StoredProxy | undefined>;
  list(tenantId: string): Promise<StoredProxy[]>;
  /**
   * Writes the proxy if it exists and its sealed key is still the one `proxy` carries (an update that read it
   * before a rewrap re-sealed it never writes the old seal back); false otherwise.
   */
  replace(proxy: ProxyToStore, audit: LogEntry): Promise<boolean>;
  /**
   * The proxy's key (and configuration, when `next` has one) sealed again (a rewrap): only if its sealed key is
   * still `proxy.sealed_key` and, when a configuration is written, its configuration still the one `proxy` read
   * (sealed or plain); false otherwise.
   */
  reseal(proxy: StoredProxy, next: ProxySeals, audit: LogEntry): Promise<boolean>;
  /**
   * A new key: the proxy's sealed key and hash replaced (and its configuration, when `next` has one), the old key's
   * lookup gone and the new one's added, in one write; only if it is still as `proxy` read it (as `reseal`; false
   * otherwise).
   */
  rotateKey(
    proxy: StoredProxy,
    next: ProxySeals & Pick<StoredProxy, "key_hash">,
    audit: LogEntry,
  ): Promise<boolean>;
  delete(proxy: StoredProxy, audit: LogEntry): Promise<boolean>;
  findByKey(keyHash: string): Promise<StoredProxy | undefined>;
}
