import { MissingKeyError } from "#shared/domain/crypto/keyring.ts";
import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { fingerprintOf } from "#shared/domain/tokens/sealing.ts";
import { searchHash } from "#shared/domain/tokens/search-hash.ts";
import { TOKEN_TYPE_NAMES, type TokenType } from "#shared/domain/tokens/types.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { TokenStore } from "#shared/ports/stores.ts";

/**
 * Lookups while HMAC versions overlap (after a rotation, until a rewrap re-hashed every token): a search or a
 * deduplicating create tries the current version, then each earlier one still live. An earlier version whose key
 * does not exist holds no token (it was retired with none left, or no token was ever hashed under it), so it is
 * passed over, and a lookup never makes it: only writes make keys.
 */
type HashDeps = { sealer: Pick<Sealer, "tokenHash" | "hmacVersions"> };

/** `deps` whose hashes never make a key (MissingKeyError instead). */
const existingKeysOnly = (deps: HashDeps): HashDeps => ({
  sealer: {
    hmacVersions: (tenantId) => deps.sealer.hmacVersions(tenantId),
    tokenHash: (tenantId, scope, value, version) =>
      deps.sealer.tokenHash(tenantId, scope, value, version, { existingKeyOnly: true }),
  },
});

async function underEach<T>(
  deps: HashDeps,
  tenantId: string,
  versions: "all" | "earlier",
  hash: (v: number, hashDeps: HashDeps) => Promise<T>,
) {
  const { live } = await deps.sealer.hmacVersions(tenantId);
  const out: T[] = [];
  let earlierDeps: HashDeps | undefined; // only during a rotation
  for (const [i, version] of live.entries()) {
    if (versions === "earlier" && i === 0) continue;
    if (i > 0) earlierDeps ??= existingKeysOnly(deps);
    try {
      out.push(await hash(version, earlierDeps ?? deps));
    } catch (error) {
      if (!(error instanceof MissingKeyError) || i === 0) throw error;
    }
  }
  return out;
}

/**
 * The blind indexes of a `data:` value: one per token type and live HMAC version, the earlier versions first and
 * the current one last. A search pages through them in that order, and a rewrap moves tokens only from an earlier
 * version's lookup items to the current one's: ahead of any cursor, so a paging search may meet a moved token
 * twice but never misses one (current first, the moved tokens went behind the cursor: key custody review).
 */
export async function liveSearchHashes(deps: HashDeps, tenantId: string, value: string): Promise<string[]> {
  const perVersion = await underEach(deps, tenantId, "all", (version, hashDeps) =>
    Promise.all(TOKEN_TYPE_NAMES.map((type) => searchHash(hashDeps, tenantId, type, value, version))),
  );
  return perVersion.reverse().flat();
}

/** The value's fingerprints under the earlier live HMAC versions (none outside a rotation). */
export function earlierFingerprints(
  deps: HashDeps,
  tenantId: string,
  type: TokenType,
  expression: string,
  rendered: string,
): Promise<string[]> {
  return underEach(deps, tenantId, "earlier", (version, hashDeps) =>
    fingerprintOf(hashDeps, tenantId, type, expression, rendered, version),
  );
}

/** The live token an earlier-version fingerprint of the value names, if any. */
export async function earlierDuplicate(
  deps: { tokens: Pick<TokenStore, "liveFingerprintOwner">; clock: Clock },
  tenantId: string,
  type: string,
  fingerprints: readonly string[] | undefined,
): Promise<string | undefined> {
  for (const fingerprint of fingerprints ?? []) {
    const owner = await deps.tokens.liveFingerprintOwner(tenantId, type, fingerprint, deps.clock.now());
    if (owner) return owner;
  }
  return undefined;
}
