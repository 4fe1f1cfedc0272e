/**
 * Wraps and unwraps data keys under a master key: KMS in AWS, a local master key file locally.
 * `context` is bound to the wrapped key (KMS encryption context / AEAD associated data), so a wrapped key
 * copied to another tenant does not unwrap.
 */
export interface KeyWrapper {
  generateDataKey(context: Record<string, string>): Promise<GeneratedKey>;
  unwrap(wrapped: Buffer, context: Record<string, string>): Promise<Buffer>;
}

export interface GeneratedKey {
  plaintext: Buffer;
  wrapped: Buffer;
  /**
   * The tenant custody the key was generated under, when the wrapper follows one (TenantKeyWrapper): the tenant's
   * own KMS key ARN, or null for the deployment's key. The key is stored only while the tenant's custody is still
   * that (DataKeyStore.putIfAbsent), so a key made just before the tenant brought its own key is never kept
   * outside it.
   */
  custody?: string | null;
}
