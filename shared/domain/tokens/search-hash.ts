import type { Sealer } from "#shared/domain/crypto/sealer.ts";

/**
 * The blind index of one search value: HMAC-SHA256 under the tenant's HMAC key of `version` (default the current
 * one; the hash names its version), scoped by token type. Every write that stores search indexes and every
 * `data:` search hash here, so both always agree.
 */
export function searchHash(
  deps: { sealer: Pick<Sealer, "tokenHash"> },
  tenantId: string,
  type: string,
  value: string,
  version?: number,
): Promise<string> {
  return deps.sealer.tokenHash(tenantId, `search:${type}`, value, version);
}
