import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { isAnswerKeyId, versionedHash } from "../keys/key-refs.ts";
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

/** AES-256-GCM under `key`, bound to `binding`: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts). */
export function sealWithKey(binding: SealBinding, plaintext: string, keyId: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad(binding));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, keyId, iv, cipher.getAuthTag(), body]
    .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
    .join(".");
}

/** The parts of a sealed form: the key it names, and what opening it takes. */
interface SealedParts {
  keyId: string;
  iv: string;
  tag: string;
  body: string;
}

function partsOf(sealed: string): SealedParts {
  const [version, keyId, iv, tag, body] = sealed.split(".");
  if (version !== VERSION || !keyId || !iv || !tag || body === undefined)
    throw new Error("Unreadable ciphertext");
  return { keyId, iv, tag, body };
}

function decrypt(binding: SealBinding, parts: SealedParts, key: Buffer): string {
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(parts.iv, "base64url"));
  decipher.setAAD(aad(binding));
  decipher.setAuthTag(Buffer.from(parts.tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(parts.body, "base64url")), decipher.final()]).toString(
    "utf8",
  );
}

/** Opens what sealWithKey sealed, with the key the sealed form names (`keyFor` may refuse it). */
export async function openSealed(
  binding: SealBinding,
  sealed: string,
  keyFor: (keyId: string) => Promise<Buffer>,
): Promise<string> {
  const parts = partsOf(sealed);
  return decrypt(binding, parts, await keyFor(parts.keyId));
}

/**
 * AES-256-GCM under the tenant's current data key. The sealed form names its key id so rotated keys
 * still open old data: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
export class Sealer {
  constructor(private readonly keyring: Keyring) {}

  /** `keyId`: seal under that (existing) key instead of the current one (a cvc beside its data's ciphertext). */
  async seal(binding: SealBinding, plaintext: string, keyId?: string): Promise<string> {
    const { keyId: id, key } = keyId
      ? { keyId, key: await this.dataKey(binding.tenantId, keyId) }
      : await this.keyring.currentKey(binding.tenantId);
    return sealWithKey(binding, plaintext, id, key);
  }

  hmacVersions(tenantId: string): Promise<{ current: number; live: number[] }> {
    return this.keyring.hmacVersions(tenantId);
  }

  async open(binding: SealBinding, sealed: string): Promise<string> {
    const parts = partsOf(sealed);
    // A key the keyring holds opens the data in this turn (every read passes here); else it is loaded.
    const key =
      (isAnswerKeyId(parts.keyId) ? undefined : this.keyring.cachedKey(binding.tenantId, parts.keyId)) ??
      (await this.dataKey(binding.tenantId, parts.keyId));
    return decrypt(binding, parts, key);
  }

  /**
   * An existing key a ciphertext names, never an answer key: those seal idempotent answers only (answer-sealer.ts),
   * and the functions that hold them must not be able to forge token data, proxy keys or configurations that a
   * data function would open.
   */
  private async dataKey(tenantId: string, keyId: string): Promise<Buffer> {
    if (isAnswerKeyId(keyId)) throw new Error("Sealed under an answer key");
    return this.keyring.keyFor(tenantId, keyId);
  }

  /**
   * A token's fingerprint or search hash: HMAC-SHA256 under the tenant's HMAC key of `version` (default the
   * current one), scoped by a label, naming its version (key-refs.ts versionedHash). Versions rotate with the
   * data keys; a rewrap re-computes every token's. `existingKeyOnly`: the version's key is never made here
   * (MissingKeyError when it does not exist): lookups under earlier versions (keys/dual-lookup.ts).
   */
  async tokenHash(
    tenantId: string,
    scope: string,
    value: string,
    version?: number,
    options: { existingKeyOnly?: boolean } = {},
  ): Promise<string> {
    const at = version ?? (await this.keyring.hmacVersions(tenantId)).current;
    const key = await this.keyring.hmacKey(tenantId, at, { existingOnly: options.existingKeyOnly === true });
    return versionedHash(
      at,
      createHmac("sha256", key).update(`${scope}\n${value}`, "utf8").digest("base64url"),
    );
  }

  /**
   * Keyed digest under the tenant's first fingerprint key, which never rotates: request signatures of idempotent
   * requests and logged search queries must compare across rotations. (Token hashes: tokenHash.)
   */
  async fingerprint(tenantId: string, scope: string, value: string): Promise<string> {
    const key = await this.keyring.fingerprintKey(tenantId);
    return createHmac("sha256", key).update(`${scope}\n${value}`, "utf8").digest("base64url");
  }
}
