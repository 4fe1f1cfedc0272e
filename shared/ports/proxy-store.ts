import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredProxy } from "#shared/domain/proxies/proxy.ts";

export interface ProxyStore {
  create(proxy: StoredProxy, audit: LogEntry): Promise<void>;
  get(tenantId: string, id: string): Promise<StoredProxy | undefined>;
  list(tenantId: string): Promise<StoredProxy[]>;
  replace(proxy: StoredProxy, audit: LogEntry): Promise<boolean>;
  delete(proxy: StoredProxy, audit: LogEntry): Promise<boolean>;
  findByKey(keyHash: string): Promise<StoredProxy | undefined>;
}
