import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredProxy } from "#shared/domain/proxies/proxy.ts";

export interface ProxyStore {
  create(proxy: StoredProxy, audit: LogEntry): Promise<void>;
  get(tenantId: string, id: string): Promise<StoredProxy | undefined>;
  list(tenantId: string): Promise<StoredProxy[]>;
  /**
   * Writes the proxy if it exists and its sealed key is still the one `proxy` carries (an update that read it
   * before a rewrap re-sealed it never writes the old seal back); false otherwise.
   */
  replace(proxy: StoredProxy, audit: LogEntry): Promise<boolean>;
  /** The proxy's key sealed again (a rewrap): only if its sealed key is still `proxy.sealed_key`; false otherwise. */
  reseal(proxy: StoredProxy, sealedKey: string, audit: LogEntry): Promise<boolean>;
  /**
   * A new key: the proxy's sealed key and hash replaced, the old key's lookup gone and the new one's added, in one
   * write; only if its sealed key is still `proxy.sealed_key` (false otherwise).
   */
  rotateKey(
    proxy: StoredProxy,
    next: Pick<StoredProxy, "sealed_key" | "key_hash">,
    audit: LogEntry,
  ): Promise<boolean>;
  delete(proxy: StoredProxy, audit: LogEntry): Promise<boolean>;
  findByKey(keyHash: string): Promise<StoredProxy | undefined>;
}
