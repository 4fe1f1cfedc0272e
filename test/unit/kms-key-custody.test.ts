/**
 * The KMS side of bring-your-own-key and deletion receipts, with the KMS client mocked: the calls made
 * (ReEncrypt per data key with the tenant's encryption context on both sides, GenerateDataKey/Decrypt under the
 * customer's key, Sign with ECDSA_SHA_256), a customer's refusal told apart from other failures, and a receipt
 * signed the way KMS signs verifying with node:crypto.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import {
  DecryptCommand,
  GenerateDataKeyCommand,
  GetPublicKeyCommand,
  KMSClient,
  ReEncryptCommand,
  SignCommand,
} from "@aws-sdk/client-kms";
import { mockClient } from "aws-sdk-client-mock";
import { beforeEach, describe, expect, it } from "vitest";
import { KmsCustomerKeys } from "#shared/adapters/kms/kms-customer-keys.ts";
import { KmsReceiptSigner } from "#shared/adapters/kms/kms-receipt-signer.ts";
import { TenantKeyWrapper, unframe } from "#shared/domain/crypto/tenant-key-wrapper.ts";
import { signReceipt, verifyReceipt } from "#shared/domain/deletion-receipt.ts";
import { DomainError } from "#shared/domain/errors.ts";
import { CustomerKeyUnavailable } from "#shared/ports/customer-keys.ts";

const kms = mockClient(KMSClient);
const DEPLOYMENT_KEY = "arn:aws:kms:eu-west-1:111111111111:key/deployment";
const CUSTOMER_KEY = "arn:aws:kms:eu-west-1:222222222222:key/1234abcd-12ab-34cd-56ef-1234567890ab";
const context = { tenant_id: "t-1", key_id: "k680" };
const refusal = (name: string) => Object.assign(new Error("refused"), { name });

beforeEach(() => kms.reset());

describe("KmsCustomerKeys", () => {
  it("re-wraps a data key with one ReEncrypt from the deployment's key to the customer's, the context on both sides", async () => {
    kms.on(ReEncryptCommand).resolves({ CiphertextBlob: Buffer.from("under-customer") });
    const keys = new KmsCustomerKeys(new KMSClient({}), DEPLOYMENT_KEY);

    const moved = await keys.reEncrypt(Buffer.from("under-deployment"), context, undefined, CUSTOMER_KEY);

    expect(moved.toString()).toBe("under-customer");
    const calls = kms.commandCalls(ReEncryptCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      CiphertextBlob: Buffer.from("under-deployment"),
      SourceKeyId: DEPLOYMENT_KEY,
      SourceEncryptionContext: context,
      DestinationKeyId: CUSTOMER_KEY,
      DestinationEncryptionContext: context,
    });
  });

  it("uses the customer's key for GenerateDataKey and Decrypt", async () => {
    kms
      .on(GenerateDataKeyCommand)
      .resolves({ Plaintext: Buffer.alloc(32, 1), CiphertextBlob: Buffer.from("w") });
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.alloc(32, 1) });
    const wrapper = new KmsCustomerKeys(new KMSClient({}), DEPLOYMENT_KEY).wrapper(CUSTOMER_KEY);

    const generated = await wrapper.generateDataKey(context);
    await wrapper.unwrap(generated.wrapped, context);

    expect(kms.commandCalls(GenerateDataKeyCommand)[0]?.args[0].input).toMatchObject({
      KeyId: CUSTOMER_KEY,
      KeySpec: "AES_256",
      EncryptionContext: context,
    });
    expect(kms.commandCalls(DecryptCommand)[0]?.args[0].input).toMatchObject({
      KeyId: CUSTOMER_KEY,
      EncryptionContext: context,
    });
  });

  it.each([
    "DisabledException",
    "AccessDeniedException",
    "KMSInvalidStateException",
    "NotFoundException",
    // An asymmetric or HMAC key, a malformed ARN: PUT /tenants/self/keys/kms answers 400 naming key_arn, not 500.
    "InvalidKeyUsageException",
    "InvalidArnException",
  ])("tells a customer's refusal (%s) apart: the tenant answers 423", async (name) => {
    kms.on(DecryptCommand).rejects(refusal(name));
    kms.on(GenerateDataKeyCommand).rejects(refusal(name));
    const keys = new KmsCustomerKeys(new KMSClient({}), DEPLOYMENT_KEY);
    const tenantWrapper = new TenantKeyWrapper(keys.wrapper(DEPLOYMENT_KEY), keys, async () => CUSTOMER_KEY);

    await expect(keys.wrapper(CUSTOMER_KEY).unwrap(Buffer.from("w"), context)).rejects.toBeInstanceOf(
      CustomerKeyUnavailable,
    );
    const locked = await tenantWrapper.generateDataKey(context).catch((error: unknown) => error);
    expect(locked).toBeInstanceOf(DomainError);
    expect((locked as DomainError).kind).toBe("locked");
  });

  it("lets other failures (throttling, a network error) through as they are: a 503 or 500, not a lock", async () => {
    kms.on(DecryptCommand).rejects(refusal("ThrottlingException"));
    const wrapper = new KmsCustomerKeys(new KMSClient({}), DEPLOYMENT_KEY).wrapper(CUSTOMER_KEY);

    const error = await wrapper.unwrap(Buffer.from("w"), context).catch((e: unknown) => e);

    expect(error).not.toBeInstanceOf(CustomerKeyUnavailable);
    expect((error as Error).name).toBe("ThrottlingException");
  });

  it("names the customer's key in the data key it generates, so unwrapping follows it", async () => {
    kms
      .on(GenerateDataKeyCommand)
      .resolves({ Plaintext: Buffer.alloc(32, 2), CiphertextBlob: Buffer.from("blob") });
    const keys = new KmsCustomerKeys(new KMSClient({}), DEPLOYMENT_KEY);
    const tenantWrapper = new TenantKeyWrapper(keys.wrapper(DEPLOYMENT_KEY), keys, async () => CUSTOMER_KEY);

    const generated = await tenantWrapper.generateDataKey(context);

    expect(unframe(generated.wrapped)).toEqual({ keyArn: CUSTOMER_KEY, wrapped: Buffer.from("blob") });
    expect(unframe(Buffer.from("deployment-blob"))).toEqual({ wrapped: Buffer.from("deployment-blob") });
  });
});

describe("KmsReceiptSigner", () => {
  it("signs with ECDSA_SHA_256 in KMS; the receipt verifies with the public key KMS answers, and a changed one does not", async () => {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    kms.on(SignCommand).callsFake((input: { Message: Uint8Array }) => ({
      Signature: sign("sha256", Buffer.from(input.Message), pair.privateKey),
    }));
    kms.on(GetPublicKeyCommand).resolves({
      KeyId: "receipts",
      PublicKey: pair.publicKey.export({ type: "spki", format: "der" }),
    });
    const signer = new KmsReceiptSigner(new KMSClient({}), "receipts");

    const receipt = await signReceipt(signer, {
      tenant_id: "t-1",
      deleted_at: "2026-11-26T08:00:00.000Z",
      destroyed_key_versions: ["fingerprint", "k680"],
      purge_deadline: "2026-11-26T09:00:00.000Z",
    });
    const key = await signer.publicKey();

    expect(kms.commandCalls(SignCommand)[0]?.args[0].input).toMatchObject({
      KeyId: "receipts",
      MessageType: "RAW",
      SigningAlgorithm: "ECDSA_SHA_256",
    });
    expect(key.algorithm).toBe("ECDSA_P256_SHA256");
    expect(verifyReceipt(receipt, key)).toBe(true);
    expect(verifyReceipt({ ...receipt, purge_deadline: "2027-01-01T00:00:00.000Z" }, key)).toBe(false);
  });
});
