import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** UUIDv7: time-ordered, so store keys built from it sort by creation time. */
export function uuidv7(at: Date): string {
  const bytes = randomBytes(16);
  const ms = BigInt(at.getTime());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export type KeyKind = "public" | "private" | "management" | "session" | "root" | "proxy";

const KEY_PREFIX: Record<KeyKind, string> = {
  public: "key_pub_",
  private: "key_pvt_",
  management: "key_mgt_",
  session: "key_ses_",
  root: "key_root_",
  proxy: "key_prx_",
};

/** A new API key: 192 random bits, base64url, prefixed by kind so a leaked key is recognisable. */
export function newApiKey(kind: KeyKind): string {
  return `${KEY_PREFIX[kind]}${randomBytes(24).toString("base64url")}`;
}

/** Keys are high-entropy, so a single SHA-256 is enough to store them irreversibly. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
