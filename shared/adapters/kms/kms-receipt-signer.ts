import { GetPublicKeyCommand, type KMSClient, SignCommand } from "@aws-sdk/client-kms";
import type { ReceiptPublicKey, ReceiptSigner } from "#shared/ports/receipt-signer.ts";

/**
 * In AWS the deployment signs with a KMS asymmetric key (ECC_NIST_P256, SIGN_VERIFY): the private key never
 * leaves KMS. KMS answers ECDSA signatures in DER, which node:crypto's verify takes as they are.
 */
export class KmsReceiptSigner implements ReceiptSigner {
  private cached: Promise<ReceiptPublicKey> | undefined;

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  publicKey(): Promise<ReceiptPublicKey> {
    this.cached ??= this.kms.send(new GetPublicKeyCommand({ KeyId: this.keyId })).then((out) => {
      if (!out.PublicKey) throw new Error("KMS returned no public key");
      const der = Buffer.from(out.PublicKey).toString("base64");
      const pem = `-----BEGIN PUBLIC KEY-----\n${der.match(/.{1,64}/g)?.join("\n")}\n-----END PUBLIC KEY-----\n`;
      return {
        algorithm: "ECDSA_P256_SHA256" as const,
        key_id: out.KeyId ?? this.keyId,
        public_key_pem: pem,
      };
    });
    // A failed fetch is tried again next time, not remembered.
    this.cached.catch(() => {
      this.cached = undefined;
    });
    return this.cached;
  }

  async sign(payload: Buffer): Promise<Buffer> {
    const out = await this.kms.send(
      new SignCommand({
        KeyId: this.keyId,
        Message: payload,
        MessageType: "RAW",
        SigningAlgorithm: "ECDSA_SHA_256",
      }),
    );
    if (!out.Signature) throw new Error("KMS returned no signature");
    return Buffer.from(out.Signature);
  }
}
