import type { KeyWrapper } from "./key-wrapper.ts";

/**
 * A tenant's own key (bring your own key): KMS in AWS, a local key file standing in for one locally. Both throw
 * CustomerKeyUnavailable when the key refuses (disabled, deleted, grant or policy revoked).
 */
export interface CustomerKeys {
  /** Data keys wrapped and unwrapped under the customer's key. */
  wrapper(keyArn: string): KeyWrapper;
  /**
   * A wrapped data key moved from one key to another without it leaving the key service (KMS ReEncrypt).
   * `from` undefined: the deployment's key.
   */
  reEncrypt(
    wrapped: Buffer,
    context: Record<string, string>,
    from: string | undefined,
    to: string,
  ): Promise<Buffer>;
}

/** The customer's key refused; `reason` is the KMS error name (never a message: those can echo request values). */
export class CustomerKeyUnavailable extends Error {
  constructor(readonly reason: string) {
    super(`The tenant's key is unavailable (${reason})`);
    this.name = "CustomerKeyUnavailable";
  }
}

/** Where a tenant's data keys are wrapped: its own key's ARN, or undefined for the deployment's. */
export interface KeyCustodyStore {
  customerKey(tenantId: string): Promise<string | undefined>;
  setCustomerKey(tenantId: string, keyArn: string, at: string): Promise<void>;
  /** The tenant's wrapped data keys (and HMAC keys), by id. */
  wrappedKeys(tenantId: string): Promise<{ keyId: string; wrapped: Buffer }[]>;
  /**
   * Replaces a wrapped key if it is still `previous`, and only while the tenant's key is still `keyArn` (what
   * `next` is wrapped under), in one write: false when another write changed the key, CustodyChanged when another
   * key was set for the tenant meanwhile.
   */
  replaceWrapped(
    tenantId: string,
    keyId: string,
    previous: Buffer,
    next: Buffer,
    keyArn: string,
  ): Promise<boolean>;
}
