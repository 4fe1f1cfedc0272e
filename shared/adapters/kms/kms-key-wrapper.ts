import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from "@aws-sdk/client-kms";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";

/** Data keys from KMS GenerateDataKey (AES-256), bound to an encryption context. */
export class KmsKeyWrapper implements KeyWrapper {
  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  async generateDataKey(context: Record<string, string>) {
    const out = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: "AES_256", EncryptionContext: context }),
    );
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error("KMS returned no data key");
    return { plaintext: Buffer.from(out.Plaintext), wrapped: Buffer.from(out.CiphertextBlob) };
  }

  async unwrap(wrapped: Buffer, context: Record<string, string>) {
    const out = await this.kms.send(
      new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: wrapped, EncryptionContext: context }),
    );
    if (!out.Plaintext) throw new Error("KMS returned no plaintext");
    return Buffer.from(out.Plaintext);
  }
}
