import type { LogEntry } from "#shared/domain/audit.ts";

/** What a deleted tenant's owner keeps: signed by the deployment (deletion-receipt.ts says how to verify it). */
export interface DeletionReceipt {
  tenant_id: string;
  deleted_at: string;
  /** The data-key and HMAC-key ids destroyed by the deletion. */
  destroyed_key_versions: string[];
  /** By then no item of the tenant remains in the table (the sweep purges it). */
  purge_deadline: string;
  /** base64url signature over receiptPayload (deletion-receipt.ts). */
  signature: string;
}

/** The deployment-level record of a deletion: it outlives the tenant (and is what the purge leaves). */
export interface TenantTombstone {
  tenant_id: string;
  receipt: DeletionReceipt;
  purged_at?: string;
}

export interface TenantDeletionStore {
  /** Whether a tombstone exists for the tenant (a strongly consistent read). */
  isDeleted(tenantId: string): Promise<boolean>;
  /** The ids of the tenant's stored data keys and HMAC keys. */
  keyVersions(tenantId: string): Promise<string[]>;
  /**
   * The crypto-shred: the tombstone, the pending purge and the deletion's audit entries (in the tenant's log and
   * at the deployment level) with the first key items deleted in one write, the rest of the key items right
   * after (those a failure leaves are the purge's: the tombstone already refuses them). False when the tenant was
   * deleted already (nothing written).
   */
  shred(input: {
    tombstone: TenantTombstone;
    /** The purge starts no earlier than this: requests in flight at the deletion have finished. */
    purgeNotBefore: string;
    /** Written to the tenant's log (purged with it) and kept at the deployment level. */
    audit: LogEntry[];
    /** Kept at the deployment level only: one `tenant_key` delete entry per destroyed version. */
    keyAudit: LogEntry[];
  }): Promise<boolean>;
  getTombstone(tenantId: string): Promise<TenantTombstone | undefined>;
}

/** A deleted tenant whose items are still being removed. */
export interface PendingPurge {
  tenantId: string;
  notBefore: string;
  /** Where the purge got to (opaque to the domain). */
  cursor?: string;
}

export interface TenantPurgeStore {
  pending(): Promise<PendingPurge[]>;
  /**
   * Removes one page's worth of the tenant's items (every item whose keys or `tenant_id` name it, and its
   * members' users), never the deployment-level record. Answers where to go on from, or undefined when done.
   */
  purgePage(tenantId: string, cursor: string | undefined): Promise<{ next?: string; deleted: number }>;
  /** Records progress, so a purge cut short resumes there. */
  saveCursor(tenantId: string, cursor: string): Promise<void>;
  /** The purge is complete: the pending entry goes, the tombstone records when, with its audit entry. */
  finish(tenantId: string, at: string, audit: LogEntry): Promise<void>;
}
