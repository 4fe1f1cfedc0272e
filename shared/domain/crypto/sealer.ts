import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import type { Keyring } from "./keyring.ts";

const VERSION = "v1";
const IV_BYTES = 12;

/** What a ciphertext is bound to: moving it to another tenant, token or field makes it fail to open. */
export interface SealBinding {
  tenantId: string;
  tokenId: string;
  field: string;
}

const aad = (b: SealBinding) =>
  Buffer.from(`svc-vault|${VERSION}|${b.tenantId}|${b.tokenId}|${b.field}`, "utf8");

/**
 * AES-256-GCM under the tenant's current data key. The sealed form names its key id so rotated keys
 * still open old data: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
export class Sealer {
  constructor(private readonly keyring: Keyring) {}

  async seal(binding: SealBinding, plaintext: string): Promise<string> {
    const { keyId, key } = await this.keyring.currentKey(binding.tenantId);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(aad(binding));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [VERSION, keyId, iv, cipher.getAuthTag(), body]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  }

  async open(binding: SealBinding, sealed: string): Promise<string> {
    const [version, keyId, iv, tag, body] = sealed.split(".");
    if (version !== VERSION || !keyId || !iv || !tag || body === undefined)
      throw new Error("Unreadable ciphertext");
    const key = await this.keyring.keyFor(binding.tenantId, keyId);
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAAD(aad(binding));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  }

  /** Keyed fingerprint: HMAC-SHA256 with the tenant's fingerprint key, scoped by a label (the token type). */
  async fingerprint(tenantId: string, scope: string, value: string): Promise<string> {
    const key = await this.keyring.fingerprintKey(tenantId);
    return createHmac("sha256", key).update(`${scope}\n${value}`, "utf8").digest("base64url");
  }
}
