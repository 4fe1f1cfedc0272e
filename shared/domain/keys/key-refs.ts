import type { StoredToken } from "#shared/domain/tokens/token.ts";

/**
 * Which keys a stored token needs: the data key its ciphertexts name, and the HMAC key version of its fingerprint
 * and search hashes. Every token write adjusts the counters of key sets by the difference (keyRefDelta), in the
 * same transaction, so a key version says how many tokens still need it without a scan.
 */

/** Data-key versions are integers; version N is the key id `k<N>` (the id a sealed value names). */
export const dataKeyId = (version: number) => `k${version}`;

export function dataVersionOf(keyId: string): number | undefined {
  const match = /^k(\d+)$/.exec(keyId);
  return match ? Number(match[1]) : undefined;
}

/**
 * Answer keys: a tenant's keys for idempotent answers and their request signatures only, never for token data
 * (`answers-k<N>` beside data version N, `answers-fingerprint`). The functions that never open token data
 * may use these and no others: their grants name the key id's prefix (lib/constructs/api-function.ts), so a
 * flaw in one of them cannot unwrap a data or HMAC key.
 */
export const ANSWER_KEY_PREFIX = "answers-";
export const answerKeyId = (keyId: string) => `${ANSWER_KEY_PREFIX}${keyId}`;
export const isAnswerKeyId = (keyId: string) => keyId.startsWith(ANSWER_KEY_PREFIX);

/** The key id of the throwaway data key a tenant's own KMS key is tried with before it is taken (key-custody.ts). */
export const CUSTOMER_KEY_CHECK_ID = "byok-check";

/** HMAC version 1 is the tenant's first fingerprint key (its id predates versions); later ones are `hmac<N>`. */
export const hmacKeyId = (version: number) => (version === 1 ? "fingerprint" : `hmac${version}`);

export function hmacVersionOfKeyId(keyId: string): number | undefined {
  if (keyId === "fingerprint") return 1;
  const match = /^hmac(\d+)$/.exec(keyId);
  return match ? Number(match[1]) : undefined;
}

/**
 * A fingerprint or search hash names its HMAC version: bare for version 1 (as every hash before versions),
 * `h<N>.<hash>` from version 2. Base64url has no `.`, so the two never meet.
 */
export function versionedHash(version: number, digest: string): string {
  return version === 1 ? digest : `h${version}.${digest}`;
}

export function hashVersionOf(hash: string): number {
  const match = /^h(\d+)\./.exec(hash);
  return match ? Number(match[1]) : 1;
}

/** The key id a sealed value (`v1.<keyId>.<iv>.<tag>.<body>`) names. */
export function sealedKeyIdOf(sealed: string): string | undefined {
  return sealed.split(".")[1] || undefined;
}

export type KeyedToken = Pick<StoredToken, "sealed_data" | "fingerprint"> &
  Partial<Pick<StoredToken, "search_hashes">>;

/** The key ids a token needs (its cvc is always sealed under its data's key, see sealData). */
export function keyRefsOf(token: KeyedToken): string[] {
  const refs = new Set<string>();
  const dataKey = sealedKeyIdOf(token.sealed_data);
  if (dataKey) refs.add(dataKey);
  refs.add(hmacKeyId(hashVersionOf(token.fingerprint)));
  for (const hash of token.search_hashes ?? []) refs.add(hmacKeyId(hashVersionOf(hash)));
  return [...refs].sort();
}

/**
 * The token's key set as one counter name: its key ids joined by `+` (`fingerprint+k690`). Tokens are counted per
 * key set, not per key, so a write updates one counter item rather than one per key (its data key and its HMAC
 * version); a key's count is the sum over every set that names it (keySetKeys).
 */
export function keySetOf(token: KeyedToken): string {
  return keyRefsOf(token).join("+");
}

/** The key ids a counter name stands for (a key set, or a single key id as counted before sets). */
export function keySetKeys(set: string): string[] {
  return set.split("+");
}

/** The counter names a stored token adds to (one: its key set), as transactions record them. */
export function keySetRefs(token: KeyedToken): string[] {
  return [keySetOf(token)];
}

/** Counter changes of one token write: -1 for the key set it stops needing, +1 for the one it starts to. */
export function keyRefDelta(
  before: KeyedToken | undefined,
  after: KeyedToken | undefined,
): Map<string, number> {
  return refDelta(before ? keySetRefs(before) : [], after ? keySetRefs(after) : []);
}

/** As keyRefDelta, from the key ids a write's token needed before and needs after. */
export function refDelta(before: readonly string[], after: readonly string[]): Map<string, number> {
  const was = new Set(before);
  const is = new Set(after);
  const delta = new Map<string, number>();
  for (const ref of was) if (!is.has(ref)) delta.set(ref, -1);
  for (const ref of is) if (!was.has(ref)) delta.set(ref, 1);
  return delta;
}

/** The sum of several writes' changes (one write touches each counter item once), zeros left out. */
export function sumDeltas(deltas: Iterable<Map<string, number>>): Map<string, number> {
  const sum = new Map<string, number>();
  for (const delta of deltas) for (const [ref, n] of delta) sum.set(ref, (sum.get(ref) ?? 0) + n);
  for (const [ref, n] of sum) if (n === 0) sum.delete(ref);
  return sum;
}

/** Only the increments (a transaction reserves what its pending write will need) or only the decrements. */
export function partOf(delta: Map<string, number>, sign: 1 | -1): Map<string, number> {
  return new Map([...delta].filter(([, n]) => Math.sign(n) === sign));
}

/** The opposite changes (undoing a reservation). */
export function negated(delta: Map<string, number>): Map<string, number> {
  return new Map([...delta].map(([ref, n]) => [ref, -n]));
}

/**
 * A transactional operation's counts: staging reserved what the pending version adds (partOf +1); the commit
 * releases what the stored version needed and the new one does not; a rollback gives the reservation back.
 */
export function commitDelta(before: readonly string[], after: readonly string[]): Map<string, number> {
  return partOf(refDelta(before, after), -1);
}

export function rollbackDelta(before: readonly string[], after: readonly string[]): Map<string, number> {
  return negated(partOf(refDelta(before, after), 1));
}
