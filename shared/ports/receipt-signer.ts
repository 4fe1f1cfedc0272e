/** How the deployment signs deletion receipts: Ed25519 locally, a KMS asymmetric key (ECDSA P-256) in AWS. */
export type ReceiptAlgorithm = "Ed25519" | "ECDSA_P256_SHA256";

export interface ReceiptPublicKey {
  algorithm: ReceiptAlgorithm;
  /** Names the key (a digest of it locally, the KMS key id in AWS). */
  key_id: string;
  /** SubjectPublicKeyInfo, PEM: what node:crypto's createPublicKey takes. */
  public_key_pem: string;
}

export interface ReceiptSigner {
  publicKey(): Promise<ReceiptPublicKey>;
  /** The signature over `payload` (Ed25519: 64 bytes; ECDSA: DER), as node:crypto's verify checks it. */
  sign(payload: Buffer): Promise<Buffer>;
}
