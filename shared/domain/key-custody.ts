import { conflict, validationError } from "#shared/domain/errors.ts";
import type { Clock } from "#shared/ports/clock.ts";
import {
  type CustomerKeys,
  CustomerKeyUnavailable,
  type KeyCustodyStore,
} from "#shared/ports/customer-keys.ts";
import { CustodyChanged } from "#shared/ports/data-key-store.ts";
import type { MemberStore } from "#shared/ports/member-store.ts";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import { auditEvent, recordEvents } from "./audit-entry.ts";
import { frameCustomerWrapped, keyUnavailable, unframe } from "./crypto/tenant-key-wrapper.ts";
import type { TenantPrincipal } from "./entities.ts";
import { CUSTOMER_KEY_CHECK_ID } from "./keys/key-refs.ts";
import { assertOwnerKey } from "./owner-key.ts";

export interface KeyCustodyDeps {
  custody: KeyCustodyStore;
  customerKeys: CustomerKeys;
  members: Pick<MemberStore, "getMember">;
  auditLog: Pick<AuditLogStore, "append">;
  clock: Clock;
}

/** A key changed by another writer while being re-wrapped is read again, this many times at most. */
const PASSES = 3;

/** The test a key passes before anything is wrapped under it: a data key made and opened for this tenant. */
async function checkKey(customerKeys: CustomerKeys, keyArn: string, tenantId: string): Promise<void> {
  const context = { tenant_id: tenantId, key_id: CUSTOMER_KEY_CHECK_ID };
  try {
    const wrapper = customerKeys.wrapper(keyArn);
    const generated = await wrapper.generateDataKey(context);
    const opened = await wrapper.unwrap(generated.wrapped, context);
    if (!opened.equals(generated.plaintext)) throw new CustomerKeyUnavailable("IncorrectKeyException");
  } catch (error) {
    if (!(error instanceof CustomerKeyUnavailable)) throw error;
    throw validationError("The KMS key cannot be used by this deployment for this tenant.", {
      key_arn: [
        `GenerateDataKey/Decrypt with this key failed (${error.reason}): see the key policy in docs/security.md.`,
      ],
    });
  }
}

/**
 * PUT /tenants/self/keys/kms: the tenant's data keys move under its own KMS key.
 * 1. Only the OWNER member's own key.
 * 2. The key is tried first (GenerateDataKey, then Decrypt, with this tenant's context): nothing changes
 *    unless it works.
 * 3. From now on new data keys are generated under it (TenantKeyWrapper reads this at each generation).
 * 4. Every stored data key is re-wrapped: one ReEncrypt per data key, never per token; a key rewritten
 *    meanwhile is read again. Cached plaintext keys stay valid (the same keys, wrapped differently).
 */
export async function setTenantKmsKey(deps: KeyCustodyDeps, principal: TenantPrincipal, keyArn: string) {
  await assertOwnerKey(deps.members, principal, "set the tenant's KMS key");
  const tenantId = principal.tenantId;
  await checkKey(deps.customerKeys, keyArn, tenantId);
  const setAt = deps.clock.now().toISOString();
  await recordEvents(deps, [
    auditEvent(
      deps,
      principal,
      "tenant_key",
      tenantId,
      "update",
      "Data keys moved under the tenant's own KMS key",
    ),
  ]);
  await deps.custody.setCustomerKey(tenantId, keyArn, setAt);
  let rewrapped = 0;
  for (let pass = 0; pass < PASSES; pass++) {
    let left = false;
    for (const stored of await deps.custody.wrappedKeys(tenantId)) {
      const { keyArn: current, wrapped } = unframe(stored.wrapped);
      if (current === keyArn) continue;
      const context = { tenant_id: tenantId, key_id: stored.keyId };
      let moved: Buffer;
      try {
        moved = await deps.customerKeys.reEncrypt(wrapped, context, current, keyArn);
      } catch (error) {
        if (error instanceof CustomerKeyUnavailable) throw keyUnavailable(error.reason);
        throw error;
      }
      let replaced: boolean;
      try {
        replaced = await deps.custody.replaceWrapped(
          tenantId,
          stored.keyId,
          stored.wrapped,
          frameCustomerWrapped(keyArn, moved),
          keyArn,
        );
      } catch (error) {
        // Another PUT set another key since: that one moves the data keys, under its key.
        if (error instanceof CustodyChanged)
          throw conflict(
            "Another KMS key was set for this tenant meanwhile; the data keys go under that one.",
          );
        throw error;
      }
      if (replaced) rewrapped += 1;
      else left = true;
    }
    if (!left) break;
  }
  return { key_arn: keyArn, set_at: setAt, data_keys_rewrapped: rewrapped };
}
