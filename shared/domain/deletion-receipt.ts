import { createPublicKey, verify } from "node:crypto";
import type { ReceiptPublicKey, ReceiptSigner } from "#shared/ports/receipt-signer.ts";
import type { DeletionReceipt } from "#shared/ports/tenant-deletion.ts";

export type ReceiptFields = Omit<DeletionReceipt, "signature">;

/**
 * The signed bytes: the receipt's fields as JSON in this fixed order (docs/security.md shows the same few lines
 * for a tenant to verify with node:crypto).
 */
export function receiptPayload(fields: ReceiptFields): Buffer {
  return Buffer.from(
    JSON.stringify({
      tenant_id: fields.tenant_id,
      deleted_at: fields.deleted_at,
      destroyed_key_versions: fields.destroyed_key_versions,
      purge_deadline: fields.purge_deadline,
    }),
    "utf8",
  );
}

export async function signReceipt(signer: ReceiptSigner, fields: ReceiptFields): Promise<DeletionReceipt> {
  const signature = await signer.sign(receiptPayload(fields));
  return { ...fields, signature: signature.toString("base64url") };
}

/** Checks a receipt against the deployment's public key (GET /.well-known/svc-vault/receipt-key). */
export function verifyReceipt(receipt: DeletionReceipt, key: ReceiptPublicKey): boolean {
  const { signature, ...fields } = receipt;
  return verify(
    key.algorithm === "Ed25519" ? null : "sha256",
    receiptPayload(fields),
    createPublicKey(key.public_key_pem),
    Buffer.from(signature, "base64url"),
  );
}
