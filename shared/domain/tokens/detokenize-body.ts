import { recordTokenReads } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { accessOf } from "./access.ts";
import type { TokenDeps } from "./deps.ts";
import { createDetokenizer } from "./detokenize.ts";

/**
 * POST /detokenize: the body with every `{{ <id> }}` / `{{ token: <id> | filters }}` replaced by the token's
 * data as the caller's token:read rule shows it (reveal, mask, or null for redact). At most MAX_DETOKENIZED
 * tokens; an unknown one is 400, one the caller may not read 403, checked for all before any data is opened.
 * Each token is logged as one read before any of its data is opened (fail-closed: the detokenizer's hook).
 */
export async function detokenizeBody(deps: TokenDeps, principal: TenantPrincipal, body: unknown) {
  const detokenizer = createDetokenizer(
    deps,
    principal.tenantId,
    accessOf(principal),
    (tokens) => recordTokenReads(deps, principal, tokens, "Token read by detokenize"),
    "token:read",
  );
  return detokenizer.json(body);
}
