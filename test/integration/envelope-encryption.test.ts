import { randomUUID } from "node:crypto";
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { mockClient } from "aws-sdk-client-mock";
import { beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "#shared/adapters/clock.ts";
import { DynamoDataKeyStore } from "#shared/adapters/dynamodb/data-key-store.ts";
import { KmsKeyWrapper } from "#shared/adapters/kms/kms-key-wrapper.ts";
import { MasterKeyWrapper } from "#shared/adapters/local/master-key-wrapper.ts";
import { AnswerSealer } from "#shared/domain/crypto/answer-sealer.ts";
import { DEFAULT_KEYRING_OPTIONS, Keyring } from "#shared/domain/crypto/keyring.ts";
import { Sealer } from "#shared/domain/crypto/sealer.ts";
import type { KeyWrapper } from "#shared/ports/key-wrapper.ts";
import { TEST_TABLE, testDynamo } from "#test/support/dynamo.ts";

/** Counts calls that would be KMS calls in AWS. */
class CountingWrapper implements KeyWrapper {
  generated = 0;
  unwrapped = 0;
  constructor(private readonly inner: KeyWrapper) {}
  async generateDataKey(context: Record<string, string>) {
    this.generated += 1;
    return this.inner.generateDataKey(context);
  }
  async unwrap(wrapped: Buffer, context: Record<string, string>) {
    this.unwrapped += 1;
    return this.inner.unwrap(wrapped, context);
  }
}

let store: DynamoDataKeyStore;
const master = new MasterKeyWrapper(Buffer.alloc(32, 7));

beforeAll(async () => {
  store = new DynamoDataKeyStore(await testDynamo(), TEST_TABLE, () => new Date());
});

function setup(options = { rotationDays: 30, cacheSeconds: 300, cacheMaxUses: 1000 }) {
  const clock = new TestClock();
  const wrapper = new CountingWrapper(master);
  const keyring = new Keyring(wrapper, store, clock, options);
  return { clock, wrapper, keyring, sealer: new Sealer(keyring) };
}

/** As the IAM condition of the functions that hold answer keys only: every other key id is refused. */
const answerKeysOnly = (inner: KeyWrapper): KeyWrapper => {
  const check = (context: Record<string, string>) => {
    if (!context.key_id?.startsWith("answers-")) throw new Error(`AccessDenied: ${context.key_id}`);
  };
  return {
    generateDataKey: async (context) => {
      check(context);
      return inner.generateDataKey(context);
    },
    unwrap: async (wrapped, context) => {
      check(context);
      return inner.unwrap(wrapped, context);
    },
  };
};

describe("answer keys", () => {
  it("seal, open and key signatures under answer keys alone, and open nothing sealed under a data key", async () => {
    const tenantId = randomUUID();
    const binding = { tenantId, tokenId: "idempotency:x", field: "response_body" };
    const clock = new TestClock();
    const keyring = new Keyring(answerKeysOnly(master), store, clock, DEFAULT_KEYRING_OPTIONS);
    const answers = new AnswerSealer(keyring);

    const sealed = await answers.seal(binding, '{"id":"app"}');
    expect(sealed.split(".")[1]).toBe(`answers-k${keyring.periodVersion()}`);
    expect(await answers.open(binding, sealed)).toBe('{"id":"app"}');
    const signature = await answers.fingerprint(tenantId, "svc-idempotency-key", "k-1");
    // The data sealer of the same keyring is refused every key (what KMS does to such a function)…
    const data = new Sealer(keyring);
    await expect(data.seal(binding, "x")).rejects.toThrow("AccessDenied");
    await expect(data.fingerprint(tenantId, "svc-idempotency-key", "k-1")).rejects.toThrow("AccessDenied");
    // …and a value sealed under a data key (by a token function) is never opened by the answer sealer.
    const tokenFunction = new Sealer(new Keyring(master, store, clock, DEFAULT_KEYRING_OPTIONS));
    const underData = await tokenFunction.seal(binding, '{"id":"app"}');
    await expect(answers.open(binding, underData)).rejects.toThrow("Not sealed under an answer key");
    expect(await tokenFunction.fingerprint(tenantId, "svc-idempotency-key", "k-1")).not.toBe(signature);
    // Nor does a data sealer open what an answer key sealed: a function holding answer keys only cannot forge
    // token data (or a proxy key) that a token function would open.
    const forged = await answers.seal({ tenantId, tokenId: "tok-1", field: "data" }, '{"number":"4000"}');
    await expect(tokenFunction.open({ tenantId, tokenId: "tok-1", field: "data" }, forged)).rejects.toThrow(
      "Sealed under an answer key",
    );
  });
});

describe("envelope encryption", () => {
  it("seals and opens, and a ciphertext moved to another tenant, token or field fails to open", async () => {
    const { sealer } = setup();
    const tenantId = randomUUID();
    const binding = { tenantId, tokenId: "tok-1", field: "data" };

    const sealed = await sealer.seal(binding, '{"number":"4242424242424242"}');

    expect(sealed).not.toContain("4242");
    expect(await sealer.open(binding, sealed)).toBe('{"number":"4242424242424242"}');
    await expect(sealer.open({ ...binding, tokenId: "tok-2" }, sealed)).rejects.toThrow();
    await expect(sealer.open({ ...binding, field: "cvc" }, sealed)).rejects.toThrow();
    const otherTenant = randomUUID();
    await sealer.seal({ ...binding, tenantId: otherTenant }, "x");
    await expect(sealer.open({ ...binding, tenantId: otherTenant }, sealed)).rejects.toThrow();
  });

  it("makes at most one key-wrapping call per tenant per cache period, even under concurrency", async () => {
    const { sealer, wrapper, clock } = setup();
    const tenantId = randomUUID();

    await Promise.all(
      Array.from({ length: 20 }, (_, i) => sealer.seal({ tenantId, tokenId: `t${i}`, field: "data" }, "v")),
    );
    for (let i = 0; i < 20; i++) await sealer.seal({ tenantId, tokenId: `u${i}`, field: "data" }, "v");
    expect(wrapper.generated + wrapper.unwrapped).toBe(1);

    clock.advance(301);
    await sealer.seal({ tenantId, tokenId: "later", field: "data" }, "v");
    expect(wrapper.generated).toBe(1);
    expect(wrapper.unwrapped).toBe(1);
  });

  it("a second warm process unwraps the stored key once instead of generating another", async () => {
    const first = setup();
    const second = setup();
    const tenantId = randomUUID();
    const binding = { tenantId, tokenId: "tok", field: "data" };

    const sealed = await first.sealer.seal(binding, "secret");
    const opened = await second.sealer.open(binding, sealed);
    await second.sealer.seal({ ...binding, tokenId: "tok2" }, "more");

    expect(opened).toBe("secret");
    expect(second.wrapper.generated).toBe(0);
    expect(second.wrapper.unwrapped).toBe(1);
  });

  it("rotates to a new data key each period and still opens data sealed under the old one", async () => {
    const { sealer, keyring, clock, wrapper } = setup({
      rotationDays: 1,
      cacheSeconds: 300,
      cacheMaxUses: 1000,
    });
    const tenantId = randomUUID();
    const binding = { tenantId, tokenId: "tok", field: "data" };
    const oldKeyId = keyring.currentKeyId();
    const old = await sealer.seal(binding, "before rotation");

    clock.advance(86_400);
    const fresh = await sealer.seal({ ...binding, tokenId: "tok2" }, "after rotation");

    expect(keyring.currentKeyId()).not.toBe(oldKeyId);
    expect(old.split(".")[1]).toBe(oldKeyId);
    expect(fresh.split(".")[1]).toBe(keyring.currentKeyId());
    expect(wrapper.generated).toBe(2);
    expect(await sealer.open(binding, old)).toBe("before rotation");
  });

  it("keys fingerprints per tenant and scope, stable across rotation", async () => {
    const { sealer, clock } = setup({ rotationDays: 1, cacheSeconds: 300, cacheMaxUses: 1000 });
    const a = randomUUID();
    const b = randomUUID();

    const fp1 = await sealer.fingerprint(a, "card", "4242");
    clock.advance(3 * 86_400);
    const fp2 = await sealer.fingerprint(a, "card", "4242");
    const otherScope = await sealer.fingerprint(a, "token", "4242");
    const otherTenant = await sealer.fingerprint(b, "card", "4242");

    expect(fp2).toBe(fp1);
    expect(otherScope).not.toBe(fp1);
    expect(otherTenant).not.toBe(fp1);
  });
});

describe("KmsKeyWrapper", () => {
  it("asks KMS for AES-256 data keys bound to the encryption context", async () => {
    const kms = mockClient(KMSClient);
    kms
      .on(GenerateDataKeyCommand)
      .resolves({ Plaintext: new Uint8Array(32).fill(1), CiphertextBlob: new Uint8Array([9]) });
    kms.on(DecryptCommand).resolves({ Plaintext: new Uint8Array(32).fill(1) });
    const wrapper = new KmsKeyWrapper(new KMSClient({ region: "us-east-1" }), "alias/svc-vault-data");

    const generated = await wrapper.generateDataKey({ tenant_id: "t1", key_id: "k1" });
    const unwrapped = await wrapper.unwrap(generated.wrapped, { tenant_id: "t1", key_id: "k1" });

    expect(unwrapped.equals(generated.plaintext)).toBe(true);
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]?.args[0].input).toEqual({
      KeyId: "alias/svc-vault-data",
      KeySpec: "AES_256",
      EncryptionContext: { tenant_id: "t1", key_id: "k1" },
    });
    expect(kms.commandCalls(DecryptCommand)[0]?.args[0].input).toMatchObject({
      EncryptionContext: { tenant_id: "t1", key_id: "k1" },
    });
    kms.restore();
  });
});
