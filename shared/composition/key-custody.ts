import { KMSClient } from "@aws-sdk/client-kms";
import { TABLE_CALL_LIMITS } from "#shared/adapters/dynamodb/client.ts";
import { KmsCustomerKeys } from "#shared/adapters/kms/kms-customer-keys.ts";
import { KmsReceiptSigner } from "#shared/adapters/kms/kms-receipt-signer.ts";
import { LocalCustomerKeys } from "#shared/adapters/local/local-customer-keys.ts";
import { LocalReceiptSigner } from "#shared/adapters/local/local-receipt-signer.ts";
import { MasterKeyWrapper, readMasterKey } from "#shared/adapters/local/master-key-wrapper.ts";
import type { Config } from "#shared/config.ts";
import { DomainError } from "#shared/domain/errors.ts";
import { type CustomerKeys, CustomerKeyUnavailable } from "#shared/ports/customer-keys.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import type { ReceiptSigner } from "#shared/ports/receipt-signer.ts";
import { traced } from "#shared/tracer.ts";

/** Bounded as the table's calls are: KMS away is a 503 within the function's timeout, not a hang. */
export const kmsClient = (cfg: Config) =>
  traced(
    new KMSClient({
      region: cfg.region,
      maxAttempts: TABLE_CALL_LIMITS.maxAttempts,
      requestHandler: {
        connectionTimeout: TABLE_CALL_LIMITS.connectionTimeoutMs,
        requestTimeout: TABLE_CALL_LIMITS.requestTimeoutMs,
      },
    }),
  );

const noCustomerKeys: CustomerKeys = {
  wrapper: () => {
    const refuse = async (): Promise<never> => {
      throw new CustomerKeyUnavailable("NotFoundException");
    };
    return { generateDataKey: refuse, unwrap: refuse };
  },
  reEncrypt: async () => {
    throw new CustomerKeyUnavailable("NotFoundException");
  },
};

/**
 * Tenants' own keys (bring your own key): KMS in AWS, where the deployment's key is KMS too; locally the key
 * files of SVC_LOCAL_KMS_DIR beside the master key. `deployment` is the wrapper data keys are under until then.
 */
export function customerKeys(cfg: Config, deployment: KeyWrapper): CustomerKeys {
  if (cfg.kmsKeyId) return new KmsCustomerKeys(kmsClient(cfg), cfg.kmsKeyId);
  if (cfg.mode === "local" && cfg.localKmsDir && deployment instanceof MasterKeyWrapper)
    return new LocalCustomerKeys(cfg.localKmsDir, deployment);
  return noCustomerKeys;
}

/**
 * What signs deletion receipts: KMS Sign in AWS (SVC_RECEIPT_KEY_ID), locally an Ed25519 key derived from the
 * checked master key. Without either, a deletion is refused (503) rather than done without a receipt.
 */
export function receiptSigner(cfg: Config): ReceiptSigner {
  if (cfg.receiptKeyId) return new KmsReceiptSigner(kmsClient(cfg), cfg.receiptKeyId);
  const masterKey = cfg.mode === "local" && cfg.masterKeyFile ? readMasterKey(cfg.masterKeyFile) : undefined;
  if (masterKey) return new LocalReceiptSigner(masterKey);
  const refuse = async (): Promise<never> => {
    throw new DomainError("unavailable", "This deployment has no key to sign deletion receipts with.");
  };
  return { publicKey: refuse, sign: refuse };
}
