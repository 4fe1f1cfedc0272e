import { type KMSClient, ReEncryptCommand } from "@aws-sdk/client-kms";
import { type CustomerKeys, CustomerKeyUnavailable } from "#shared/ports/customer-keys.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import { KmsKeyWrapper } from "./kms-key-wrapper.ts";

/**
 * What KMS answers when the customer disabled, scheduled for deletion or stopped sharing the key, or when the ARN
 * names a key this deployment cannot use for data keys at all (asymmetric or HMAC: InvalidKeyUsageException; a
 * malformed ARN; another key than the one a data key was wrapped under): the caller's key, not a fault here.
 */
const UNAVAILABLE = new Set([
  "AccessDeniedException",
  "DisabledException",
  "KMSInvalidStateException",
  "KeyUnavailableException",
  "NotFoundException",
  "InvalidGrantTokenException",
  "InvalidKeyUsageException",
  "InvalidArnException",
  "IncorrectKeyException",
]);

async function refusalsNamed<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const name = error instanceof Error ? error.name : "";
    if (UNAVAILABLE.has(name)) throw new CustomerKeyUnavailable(name);
    throw error;
  }
}

/**
 * Tenants' own KMS keys (usually in their own accounts): the key policy or a grant lets this deployment's
 * function roles use them (docs/security.md, "Bring your own key").
 */
export class KmsCustomerKeys implements CustomerKeys {
  constructor(
    private readonly kms: KMSClient,
    /** The deployment's key: where a tenant's data keys are wrapped before it brings its own. */
    private readonly deploymentKeyId: string,
  ) {}

  wrapper(keyArn: string): KeyWrapper {
    const inner = new KmsKeyWrapper(this.kms, keyArn);
    return {
      generateDataKey: (context) => refusalsNamed(() => inner.generateDataKey(context)),
      unwrap: (wrapped, context) => refusalsNamed(() => inner.unwrap(wrapped, context)),
    };
  }

  /** One ReEncrypt per data key: the plaintext key never leaves KMS. */
  async reEncrypt(wrapped: Buffer, context: Record<string, string>, from: string | undefined, to: string) {
    const out = await refusalsNamed(() =>
      this.kms.send(
        new ReEncryptCommand({
          CiphertextBlob: wrapped,
          SourceKeyId: from ?? this.deploymentKeyId,
          SourceEncryptionContext: context,
          DestinationKeyId: to,
          DestinationEncryptionContext: context,
        }),
      ),
    );
    if (!out.CiphertextBlob) throw new Error("KMS returned no ciphertext");
    return Buffer.from(out.CiphertextBlob);
  }
}
