import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import { splitCvc } from "./sealing.ts";
import type { TokenType } from "./types.ts";

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

/**
 * A token's blind indexes, in the one way every write computes them (create, update, rewrap): each of `indexes`
 * rendered by `render` on the data **without its cvc**, as the fingerprint is (the cvc is deleted after its hour;
 * an index of it would keep it searchable, and so guessable, for the token's life), an empty render not indexed.
 */
export async function searchHashesOf(
  deps: { sealer: Pick<Sealer, "tokenHash"> },
  token: { tenantId: string; type: TokenType; indexes: readonly string[]; data: unknown },
  render: (field: string, expression: string, data: unknown) => Promise<string>,
): Promise<string[]> {
  const data = splitCvc(token.type, token.data).rest;
  const hashes: string[] = [];
  for (const [i, expression] of token.indexes.entries()) {
    const value = await render(`search_indexes.${i}`, expression, data);
    if (value !== "") hashes.push(await searchHash(deps, token.tenantId, token.type, value));
  }
  return hashes;
}
