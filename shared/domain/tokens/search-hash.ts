import type { Sealer } from "#shared/domain/crypto/sealer.ts";

/**
 * The blind index of one search value: HMAC-SHA256 under the tenant's search key (version SEARCH_KEY_VERSION),
 * scoped by token type. Every write that stores search indexes and every `data:` search hash here, so both
 * always agree.
 */
export function searchHash(
  deps: { sealer: Pick<Sealer, "fingerprint"> },
  tenantId: string,
  type: string,
  value: string,
): Promise<string> {
  return deps.sealer.fingerprint(tenantId, `search:${type}`, value);
}
