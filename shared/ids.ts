import { hash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";

/** UUIDv7: time-ordered, so store keys built from it sort by creation time. */
export function uuidv7(at: Date): string {
  // The random part comes from a v4 UUID: Node fills those from a cached block of random bytes, where a
  // randomBytes(16) per id is a system call (every audit entry has an id). After the 48-bit time come the
  // version 7 and the v4 UUID's random bits after its own version digit: 12 bits, its variant (RFC 9562's,
  // the same for both versions) and 62 bits.
  const random = randomUUID();
  const time = at.getTime().toString(16).padStart(12, "0");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
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
  // The one-shot digest (no Hash object): every request with a key hashes it.
  return hash("sha256", key, "hex");
}

/** Constant-time comparison of two hex digests. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
