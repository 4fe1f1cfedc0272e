import type { Transform } from "#shared/domain/access-rules.ts";
import { validationError } from "#shared/domain/errors.ts";
import { notePresentedToken } from "#shared/domain/idempotency-scope.ts";
import type { TokenDeps } from "./deps.ts";
import { ExpressionError } from "./expressions.ts";
import { callerVersion, type StoredToken } from "./token.ts";

export interface TokenView {
  id: string;
  tenant_id: string;
  type: string;
  data?: unknown;
  mask?: unknown;
  /** Only in revealed answers: to anyone else a fingerprint would be an oracle for the masked value. */
  fingerprint?: string;
  fingerprint_expression: string;
  containers: string[];
  metadata?: Record<string, string>;
  search_indexes?: string[];
  expires_at?: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** True for a mask that is evaluated on reads (null and absent mean "no mask": masked reads show no data). */
export const hasMask = (mask: unknown): boolean => mask !== undefined && mask !== null;

export interface PresentOptions {
  /** The token's mask already evaluated on this data (by the write that stores it): not evaluated again. */
  masked?: { value: unknown };
  /**
   * A single token's answer (a read, a create, a PATCH, a replay): a mask that fails on the stored data is a 400
   * naming nothing of the data. Otherwise (every list, page and search) the token is shown redacted (no `data`),
   * so that one token's mask never fails an answer about others.
   */
  failOnMaskError?: boolean;
}

/**
 * The token as a caller sees it: `data` revealed, masked by the token's mask, or left out (redact). The
 * `fingerprint` only with `reveal`: it equals the fingerprint of a token created with the same value, so a
 * caller who sees it masked (last 4 digits of an SSN) could confirm guesses of the rest by creating candidates.
 */
export async function present(
  deps: TokenDeps,
  token: StoredToken,
  transform: Transform,
  data: () => Promise<unknown>,
  options: PresentOptions = {},
): Promise<TokenView> {
  // Built field by field, in the answer's key order, with no temporary objects to spread: every token answer
  // passes here (a list once per item).
  const view = { id: token.id, tenant_id: token.tenant_id, type: token.type } as TokenView;
  if (token.mask !== undefined) view.mask = token.mask;
  if (transform === "reveal") view.fingerprint = token.fingerprint;
  view.fingerprint_expression = token.fingerprint_expression;
  view.containers = [token.container];
  if (token.metadata) view.metadata = token.metadata;
  if (token.search_indexes) view.search_indexes = token.search_indexes;
  if (token.expires_at) view.expires_at = token.expires_at;
  if (token.created_by) view.created_by = token.created_by;
  view.created_at = token.created_at;
  if (token.modified_by) view.modified_by = token.modified_by;
  if (token.modified_at) view.modified_at = token.modified_at;
  const shown = await withData(deps, token, transform, view, data, options);
  // An idempotent answer stores this reference, never the data (domain/idempotency-scope.ts).
  notePresentedToken(shown, () => ({
    id: token.id,
    transform,
    version: callerVersion(token),
    ...(token.mask !== undefined ? { mask: token.mask } : {}),
    created: token.created_at,
  }));
  return shown;
}

async function withData(
  deps: TokenDeps,
  token: StoredToken,
  transform: Transform,
  view: TokenView,
  data: () => Promise<unknown>,
  options: PresentOptions,
): Promise<TokenView> {
  // `view` is this answer's own object (present builds it): `data` is added to it, not to a copy.
  if (transform === "reveal") {
    view.data = await data();
    return view;
  }
  if (transform !== "mask" || !hasMask(token.mask)) return view;
  if (options.masked) {
    view.data = options.masked.value;
    return view;
  }
  const scope = { data: await data() };
  try {
    view.data = await deps.expressions.evaluateStructure(token.mask, scope);
    return view;
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    if (!options.failOnMaskError) return view;
    // The mask ran on stored data: the same answer whatever the data (and the error) was.
    throw validationError("The token's mask could not be evaluated on its data.");
  }
}
