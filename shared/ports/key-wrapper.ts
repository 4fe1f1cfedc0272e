/**
 * Wraps and unwraps data keys under a master key: KMS in AWS, a local master key file locally.
 * `context` is bound to the wrapped key (KMS encryption context / AEAD associated data), so a wrapped key
 * copied to another tenant does not unwrap.
 */
export interface KeyWrapper {
  generateDataKey(context: Record<string, string>): Promise<{ plaintext: Buffer; wrapped: Buffer }>;
  unwrap(wrapped: Buffer, context: Record<string, string>): Promise<Buffer>;
}
