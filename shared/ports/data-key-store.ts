/** Where wrapped data keys live (one item per tenant and key id). */
export interface DataKeyStore {
  get(tenantId: string, keyId: string): Promise<Buffer | undefined>;
  /**
   * Stores the wrapped key unless one exists; returns whichever is stored (a racing writer may win). With
   * `custody` (a key ARN, or null for the deployment's key), only while the tenant's custody is still that, in the
   * same write: else CustodyChanged, and nothing is stored. Never for a deleted tenant (its tombstone checked in the
   * same write): TenantDeleted, and nothing is stored.
   */
  putIfAbsent(tenantId: string, keyId: string, wrapped: Buffer, custody?: string | null): Promise<Buffer>;
}

/** The tenant's key custody changed between a data key's generation and its write: generate it again. */
export class CustodyChanged extends Error {
  constructor() {
    super("The tenant's key custody changed while a data key was made");
    this.name = "CustodyChanged";
  }
}

/** The tenant was deleted (its tombstone written) before its new data key could be stored: nothing was stored. */
export class TenantDeleted extends Error {
  constructor() {
    super("The tenant was deleted while a data key was made");
    this.name = "TenantDeleted";
  }
}
