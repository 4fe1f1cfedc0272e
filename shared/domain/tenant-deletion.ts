import { unauthorized } from "#shared/domain/errors.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { MemberStore } from "#shared/ports/member-store.ts";
import type { ReceiptSigner } from "#shared/ports/receipt-signer.ts";
import type { DeletionReceipt, TenantDeletionStore } from "#shared/ports/tenant-deletion.ts";
import { auditEvent } from "./audit-entry.ts";
import type { DeletedTenants } from "./deleted-tenants.ts";
import { signReceipt } from "./deletion-receipt.ts";
import type { TenantPrincipal } from "./entities.ts";
import { assertOwnerKey } from "./owner-key.ts";

/** Every item of a deleted tenant is gone this long after the deletion (the receipt's purge_deadline). */
export const PURGE_WITHIN_SECONDS = 3600;
/** The purge waits this long, so requests in flight at the deletion (30 s at most behind API Gateway) are done. */
export const PURGE_GRACE_SECONDS = 300;

export interface TenantDeletionDeps {
  tenantDeletion: TenantDeletionStore;
  deletedTenants: DeletedTenants;
  members: Pick<MemberStore, "getMember">;
  receiptSigner: ReceiptSigner;
  clock: Clock;
}

const later = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000).toISOString();

/**
 * DELETE /tenants/self: the OWNER ends the tenant.
 * 1. Only the OWNER member's own key.
 * 2. What is destroyed: every data key and HMAC key the tenant has.
 * 3. The receipt is signed first: a signer that fails leaves the tenant as it was.
 * 4. The crypto-shred: the tombstone (every key and session of the tenant answers 401, no data key is served)
 *    and the key items in one write; the sweep purges the rest within the hour.
 * 5. This process knows at once; every other within SVC_AUTH_CACHE_SECONDS (DeletedTenants).
 */
export async function deleteOwnTenant(
  deps: TenantDeletionDeps,
  principal: TenantPrincipal,
): Promise<DeletionReceipt> {
  await assertOwnerKey(deps.members, principal, "delete the tenant");
  const tenantId = principal.tenantId;
  const now = deps.clock.now();
  const versions = await deps.tenantDeletion.keyVersions(tenantId);
  const receipt = await signReceipt(deps.receiptSigner, {
    tenant_id: tenantId,
    deleted_at: now.toISOString(),
    destroyed_key_versions: versions,
    purge_deadline: later(now, PURGE_WITHIN_SECONDS),
  });
  const written = await deps.tenantDeletion.shred({
    tombstone: { tenant_id: tenantId, receipt },
    purgeNotBefore: later(now, PURGE_GRACE_SECONDS),
    audit: [
      auditEvent(
        deps,
        principal,
        "tenant",
        tenantId,
        "delete",
        "Tenant deleted: its keys destroyed, its items purged within the hour",
      ),
    ],
    keyAudit: versions.map((version) =>
      auditEvent(deps, principal, "tenant_key", version, "delete", "Key version destroyed with the tenant"),
    ),
  });
  // A concurrent deletion won: this key is no longer valid either.
  if (!written) throw unauthorized();
  deps.deletedTenants.markDeleted(tenantId);
  return receipt;
}
