import { createHmac } from "node:crypto";
import { isAnswerKeyId } from "../keys/key-refs.ts";
import type { Keyring } from "./keyring.ts";
import { openSealed, type SealBinding, type Sealer, sealWithKey } from "./sealer.ts";

/** What idempotency needs of a sealer: request signatures keyed, answers sealed and opened. */
export type AnswerSealing = Pick<Sealer, "fingerprint" | "seal" | "open">;

/**
 * Seals idempotent answers and keys their request signatures under the tenant's answer keys (key-refs.ts), for
 * the functions that never open token data: their grants give them those keys and no data or HMAC key. It opens
 * nothing sealed under another key: such a value never came from it.
 */
export class AnswerSealer implements AnswerSealing {
  constructor(private readonly keyring: Keyring) {}

  async seal(binding: SealBinding, plaintext: string): Promise<string> {
    const { keyId, key } = await this.keyring.currentAnswerKey(binding.tenantId);
    return sealWithKey(binding, plaintext, keyId, key);
  }

  open(binding: SealBinding, sealed: string): Promise<string> {
    return openSealed(binding, sealed, async (keyId) => {
      if (!isAnswerKeyId(keyId)) throw new Error("Not sealed under an answer key");
      return this.keyring.keyFor(binding.tenantId, keyId);
    });
  }

  async fingerprint(tenantId: string, scope: string, value: string): Promise<string> {
    const key = await this.keyring.answerFingerprintKey(tenantId);
    return createHmac("sha256", key).update(`${scope}\n${value}`, "utf8").digest("base64url");
  }
}
