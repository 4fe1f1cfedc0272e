/** Where wrapped data keys live (one item per tenant and key id). */
export interface DataKeyStore {
  get(tenantId: string, keyId: string): Promise<Buffer | undefined>;
  /** Stores the wrapped key unless one exists; returns whichever is stored (a racing writer may win). */
  putIfAbsent(tenantId: string, keyId: string, wrapped: Buffer): Promise<Buffer>;
}
