import { createHash, createPrivateKey, createPublicKey, hkdfSync, type KeyObject, sign } from "node:crypto";
import type { ReceiptPublicKey, ReceiptSigner } from "#shared/ports/receipt-signer.ts";

/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * Locally the deployment's signing key is derived from the master key (HKDF-SHA256, its own label): nothing
 * more to back up, and the same key after every restart. Ed25519.
 */
export class LocalReceiptSigner implements ReceiptSigner {
  private readonly privateKey: KeyObject;

  constructor(masterKey: Buffer) {
    const seed = Buffer.from(hkdfSync("sha256", masterKey, "", "svc-vault deletion receipts v1", 32));
    this.privateKey = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
      format: "der",
      type: "pkcs8",
    });
  }

  async publicKey(): Promise<ReceiptPublicKey> {
    const pem = createPublicKey(this.privateKey).export({ type: "spki", format: "pem" }).toString();
    return {
      algorithm: "Ed25519",
      key_id: createHash("sha256").update(pem).digest("base64url").slice(0, 16),
      public_key_pem: pem,
    };
  }

  async sign(payload: Buffer): Promise<Buffer> {
    return sign(null, payload, this.privateKey);
  }
}
