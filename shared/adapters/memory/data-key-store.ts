import type { DataKeyStore } from "#shared/ports/data-key-store.ts";

/**
 * Wrapped data keys in memory: written once per tenant and key id, as the DynamoDB store does. It holds no
 * custody record (the fakes' tenants never bring their own key), so `custody` never refuses here.
 */
export class MemoryDataKeyStore implements DataKeyStore {
  private readonly keys = new Map<string, Buffer>();

  async get(tenantId: string, keyId: string): Promise<Buffer | undefined> {
    return this.keys.get(`${tenantId}\n${keyId}`);
  }

  async putIfAbsent(
    tenantId: string,
    keyId: string,
    wrapped: Buffer,
    _custody?: string | null,
  ): Promise<Buffer> {
    const name = `${tenantId}\n${keyId}`;
    const existing = this.keys.get(name);
    if (existing) return existing;
    this.keys.set(name, Buffer.from(wrapped));
    return wrapped;
  }
}
