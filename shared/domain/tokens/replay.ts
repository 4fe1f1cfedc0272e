import { recordTokenReads } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, notFound } from "#shared/domain/errors.ts";
import { type DataRead, type PresentedTokenRef, TokenNotStanding } from "#shared/domain/idempotency-scope.ts";
import { accessOf, requireAccess } from "./access.ts";
import type { TokenDeps } from "./deps.ts";
import { present, type TokenView } from "./presenting.ts";
import { openData } from "./sealing.ts";
import { callerVersion, isExpired } from "./token.ts";

/**
 * A token an idempotent answer presented, presented again for its replay: from the token as it is now, with the
 * transform and mask of the first answer, for the same caller (the replay's scope pins credential and grant).
 * So a replay never outlives the data: a cvc past its hour is not shown, a token deleted or expired since is
 * 404, and a token changed since is 409 (showing the change would be news the first answer did not give).
 */
export async function presentAgain(
  deps: TokenDeps,
  principal: TenantPrincipal,
  ref: PresentedTokenRef,
): Promise<TokenView> {
  const token = await deps.tokens.get(principal.tenantId, ref.id);
  // A token pending in the caller's transaction is presented again (it was when first answered); rolled back,
  // it is gone.
  if (
    !token ||
    isExpired(token, deps.clock.now()) ||
    (ref.created !== undefined && ref.created !== token.created_at)
  )
    throw new TokenNotStanding(ref, "gone");
  if (callerVersion(token) !== ref.version) throw new TokenNotStanding(ref, "changed");
  // Data leaves again: audited as a read, fail-closed, before it does.
  await recordTokenReads(deps, principal, [token], "Token presented again by an idempotent replay");
  const shown = { ...token };
  if (ref.mask === undefined) delete shown.mask;
  else shown.mask = ref.mask;
  const view = await present(deps, shown, ref.transform, () => openData(deps, token), {
    failOnMaskError: true,
  });
  // The answer names the mask the token holds (a PATCH's new one), as the first answer did.
  if (token.mask === undefined) delete view.mask;
  else view.mask = token.mask;
  return view;
}

/**
 * Throws unless the token whose data an answer was computed from (detokenized: a reactor's args) is still alive,
 * at the version read, and, if its cvc was read, still holds it: a replay then shows nothing of data deleted,
 * expired or changed since, nor a cvc past its hour. Audited as a read (the answer hands the data out again).
 */
export async function checkStillReadable(
  deps: TokenDeps,
  principal: TenantPrincipal,
  read: DataRead,
  audit = true,
) {
  const token = await standingToken(deps, principal.tenantId, read);
  if (audit)
    await recordTokenReads(deps, principal, [token], "Token data handed out again by an idempotent replay");
}

/**
 * The token `read` was of, if it still stands as read (alive, the same token, at that version, its cvc still held
 * when it was read): else 404 (gone) or 409 (changed). Nothing is logged: a caller that hands data out logs it.
 */
export async function standingToken(
  deps: Pick<TokenDeps, "tokens" | "clock">,
  tenantId: string,
  read: DataRead,
) {
  const token = await deps.tokens.get(tenantId, read.id);
  const now = deps.clock.now();
  const cvcLives =
    !read.cvc ||
    (token?.sealed_cvc !== undefined &&
      token.cvc_expires_at !== undefined &&
      Date.parse(token.cvc_expires_at) > now.getTime());
  const same = token !== undefined && (read.created === undefined || read.created === token.created_at);
  if (!token || !same || isExpired(token, now) || !cvcLives)
    throw notFound("Data this idempotent request's answer was computed from");
  if (callerVersion(token) !== read.version)
    throw conflict("Data this idempotent request's answer was computed from has changed since.");
  return token;
}

/**
 * The answer of a create that took effect but never completed (domain/idempotency-scope.ts): the token it
 * created, presented as the create presents it (the rule that granted token:create), if still at its first
 * version. `at`: the created_at of the token the create made (its entry's). A token made since under the same id
 * (the caller's own deleted since, another caller's card created with that literal id) is another caller's token:
 * 404, never presented with this caller's create transform (it was: a key that reads masked got a card and its
 * cvc whole, review of 28 Nov 2026).
 */
export async function presentCreated(
  deps: TokenDeps,
  principal: TenantPrincipal,
  tokenId: string,
  at: string | undefined,
) {
  const token = await deps.tokens.get(principal.tenantId, tokenId);
  // The create's entry is made at its token's created_at (create.ts): the same token, or another's made since.
  // A record without `at` (written before effects carried it) cannot tell the tokens apart: nothing is shown.
  if (!token || at === undefined || token.created_at !== at)
    throw notFound("The token this idempotent request answered");
  const transform = requireAccess(accessOf(principal), token, "token:create");
  return presentAgain(deps, principal, {
    id: token.id,
    transform,
    version: 1,
    ...(token.mask !== undefined ? { mask: token.mask } : {}),
  });
}
