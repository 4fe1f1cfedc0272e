import { requirePageFits } from "#shared/domain/answer-size.ts";
import { recordTokenReads, tokenEvent } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, notFound, validationError } from "#shared/domain/errors.ts";
import { isPlainObject, mergePatch } from "#shared/domain/merge-patch.ts";
import { finishCommittedHold, holdTokens, releaseStaleHold } from "#shared/domain/transactions.ts";
import { countTokens } from "#shared/observability/count-tokens.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import type { PageRequest, WriteOutcome } from "#shared/ports/stores.ts";
import { accessOf, requireAccess, requireReveal, weaker } from "./access.ts";
import { containerOf, expiryOf } from "./create.ts";
import type { TokenDeps } from "./deps.ts";
import {
  checkExpression,
  checkFingerprintExpression,
  checkMask,
  renderField,
  renderMask,
} from "./expression-checks.ts";
import { hasMask, present } from "./presenting.ts";
import { fingerprintOf, openData, sealData, splitCvc } from "./sealing.ts";
import { searchHashesOf } from "./search-hash.ts";
import { isLive, type StoredToken, type TransactionContext } from "./token.ts";
import { dataErrors } from "./types.ts";

/** A live token of the caller's tenant, or 404 (unknown, another tenant's, or expired: all look the same). */
async function liveToken(deps: TokenDeps, principal: TenantPrincipal, id: string): Promise<StoredToken> {
  const token = await deps.tokens.get(principal.tenantId, id);
  if (!token || !isLive(token, deps.clock.now())) throw notFound("The token");
  return token;
}

/** The token a write starts from: a committed transaction's unapplied version of it applied first. */
async function tokenToWrite(deps: TokenDeps, principal: TenantPrincipal, id: string): Promise<StoredToken> {
  const token = await liveToken(deps, principal, id);
  return (await finishCommittedHold(deps, token)) ? liveToken(deps, principal, id) : token;
}

export async function getToken(deps: TokenDeps, principal: TenantPrincipal, id: string) {
  const token = await liveToken(deps, principal, id);
  const transform = requireAccess(accessOf(principal), token, "token:read");
  await recordTokenReads(deps, principal, [token], "Token read");
  countTokens(deps, METRIC.tokensRead, principal.tenantId);
  return present(deps, token, transform, () => openData(deps, token), { failOnMaskError: true });
}

export interface ListTokensQuery {
  ids?: string[];
  types?: string[];
  metadata?: Record<string, string>;
}

export async function listTokens(
  deps: TokenDeps,
  principal: TenantPrincipal,
  query: ListTokensQuery,
  page: PageRequest,
) {
  const grant = accessOf(principal);
  const now = deps.clock.now();
  const metadata = query.metadata
    ? Object.fromEntries(Object.entries(query.metadata).map(([k, v]) => [k.toLowerCase(), v.toLowerCase()]))
    : undefined;
  let result: { items: StoredToken[]; total: number; next?: string };
  if (query.ids?.length) {
    // Tokens by id: fetched directly, then the same filters and visibility as the listing.
    const visible = (await deps.tokens.getMany(principal.tenantId, query.ids)).filter(
      (t) =>
        isLive(t, now) &&
        (!query.types?.length || query.types.includes(t.type)) &&
        Object.entries(metadata ?? {}).every(([k, v]) =>
          Object.entries(t.metadata ?? {}).some(
            ([tk, tv]) => tk.toLowerCase() === k && tv.toLowerCase() === v,
          ),
        ) &&
        grant.evaluate(t, "token:read") !== undefined,
    );
    const offset = (page.page - 1) * page.size;
    result = { items: visible.slice(offset, offset + page.size), total: visible.length };
  } else {
    result = await deps.tokens.list(
      principal.tenantId,
      { types: query.types, metadata, visibility: grant.visibility("token:read"), now },
      page,
    );
  }
  const shown = result.items.flatMap((token) => {
    const transform = grant.evaluate(token, "token:read");
    return transform ? [{ token, transform }] : [];
  });
  const items = await Promise.all(
    // One item whose mask fails on its data is shown redacted; the rest of the page is answered.
    shown.map(({ token, transform }) => present(deps, token, transform, () => openData(deps, token))),
  );
  // Before the reads are logged: a page refused for its size reads nothing.
  requirePageFits(items, page.size);
  await recordTokenReads(
    deps,
    principal,
    shown.map(({ token }) => token),
    "Token read in a list",
  );
  countTokens(deps, METRIC.tokensRead, principal.tenantId, shown.length);
  return { items, total: result.total, ...(result.next ? { next: result.next } : {}) };
}

export interface PatchTokenInput {
  data?: unknown;
  mask?: unknown;
  metadata?: Record<string, string | null> | null;
  containers?: string[];
  search_indexes?: string[] | null;
  fingerprint_expression?: string | null;
  deduplicate_token?: boolean | null;
  expires_at?: string | null;
}

/**
 * PATCH: merge patch for data, mask and metadata; replace for the rest. Needs token:update on both containers,
 * reveal-level to move the token or change what is evaluated on its data, and token:delete as well to set or
 * shorten its expiry.
 */
export async function patchToken(
  deps: TokenDeps,
  principal: TenantPrincipal,
  id: string,
  patch: PatchTokenInput,
  transaction?: TransactionContext,
) {
  const grant = accessOf(principal);
  const current = await tokenToWrite(deps, principal, id);
  const container = patch.containers ? containerOf(current.type, patch.containers) : current.container;
  const moves = container !== current.container;
  const containers = moves ? [current, { id, container }] : [current];
  // The answer shows no more than the weaker of the caller's token:update transforms on both containers.
  const transform = containers
    .map((token) => requireAccess(grant, token, "token:update"))
    .reduce((a, b) => weaker(a, b));
  const revealed = revealChanges(patch, moves);
  if (revealed.length > 0)
    for (const token of containers) requireReveal(grant, token, "token:update", revealed.join(", "));
  const expiresAt = patch.expires_at === null ? null : expiryOf(deps, patch.expires_at);
  // An expiry that comes sooner deletes the token for everyone: that is token:delete's to decide.
  if (expiresAt && shortens(current.expires_at, expiresAt))
    for (const token of containers)
      requireAccess(grant, token, "token:delete", "needed to set or shorten expires_at");
  const hold = holdTokens(grant, containers, transaction);
  // The write replaces the whole item: a lock just released must not be written back with it.
  if (await releaseStaleHold(deps, current)) delete current.lock;
  // Expressions run on the token's stored data: without reveal, their errors must not depend on it.
  const render = (field: string, template: string, value: unknown) =>
    renderField(deps, field, template, value, { dataDependent: transform !== "reveal" });

  const next: StoredToken = { ...current, container };
  const needsData =
    patch.data !== undefined ||
    patch.mask !== undefined ||
    patch.fingerprint_expression !== undefined ||
    patch.search_indexes !== undefined;
  const currentData = needsData ? await openData(deps, current) : undefined;
  let data = currentData;
  if (patch.data !== undefined) {
    data =
      isPlainObject(currentData) && isPlainObject(patch.data)
        ? mergePatch(currentData, patch.data)
        : patch.data;
    if (data === null && patch.data === null)
      throw validationError("data cannot be removed.", { data: ["is required"] });
    const errors = dataErrors(current.type, data);
    if (errors.size > 0) throw errors.error(`The data is not a valid ${current.type}.`);
    const sealed = await sealData(deps, current.tenant_id, id, current.type, data);
    delete next.sealed_cvc;
    delete next.cvc_expires_at;
    // A cvc already given keeps its original one-hour lifetime; only a new cvc starts a new hour.
    const patchCvc = isPlainObject(patch.data) && "cvc" in patch.data;
    Object.assign(next, sealed);
    if (!patchCvc && current.sealed_cvc && sealed.sealed_cvc) next.cvc_expires_at = current.cvc_expires_at;
  }
  if (patch.mask !== undefined) {
    const mask = patch.mask === null ? undefined : mergePatch(current.mask, patch.mask);
    await checkMask(deps, mask);
    if (mask === undefined) delete next.mask;
    else next.mask = mask;
  }
  if (patch.metadata !== undefined) {
    const metadata =
      patch.metadata === null
        ? {}
        : (mergePatch(current.metadata ?? {}, patch.metadata) as Record<string, string>);
    if (Object.keys(metadata).length > 20)
      throw validationError("Too much metadata.", { metadata: ["at most 20 entries"] });
    if (Object.keys(metadata).length === 0) delete next.metadata;
    else next.metadata = metadata;
  }
  if (patch.fingerprint_expression !== undefined) {
    next.fingerprint_expression = patch.fingerprint_expression ?? current.fingerprint_expression;
    await checkFingerprintExpression(deps, next.fingerprint_expression);
  }
  if (patch.data !== undefined || patch.fingerprint_expression !== undefined) {
    const value = await render(
      "fingerprint_expression",
      next.fingerprint_expression,
      splitCvc(current.type, data).rest,
    );
    next.fingerprint = await fingerprintOf(
      deps,
      current.tenant_id,
      current.type,
      next.fingerprint_expression,
      value,
    );
  }
  // Search hashes are of what the indexes render on the stored data: renewed when either changes.
  const indexes = patch.search_indexes === undefined ? current.search_indexes : patch.search_indexes;
  if (patch.search_indexes !== undefined || (patch.data !== undefined && indexes?.length)) {
    if (!indexes?.length) {
      delete next.search_indexes;
      delete next.search_hashes;
    } else {
      for (const [i, expression] of indexes.entries())
        await checkExpression(deps, `search_indexes.${i}`, expression);
      next.search_indexes = indexes;
      next.search_hashes = await searchHashesOf(
        deps,
        { tenantId: current.tenant_id, type: current.type, indexes, data },
        render,
      );
    }
  }
  if (patch.deduplicate_token !== undefined) {
    if (patch.deduplicate_token === null) delete next.deduplicate_token;
    else next.deduplicate_token = patch.deduplicate_token;
  }
  if (expiresAt === null) delete next.expires_at;
  else if (expiresAt !== undefined) next.expires_at = expiresAt;
  next.modified_by = principal.application.id;
  next.modified_at = deps.clock.now().toISOString();
  next.version = current.version + 1;

  // A mask is stored only with data it renders on: checked when either changes, before the write.
  const masked =
    (patch.mask !== undefined || patch.data !== undefined) && hasMask(next.mask)
      ? { value: await renderMask(deps, next.mask, data, { dataDependent: transform !== "reveal" }) }
      : undefined;

  // Presented with the mask stored before the change: a new mask is the caller's expression, not a transform.
  // Built before the write, so a mask that fails on the data changes nothing.
  const shown: StoredToken = { ...next };
  if (current.mask === undefined) delete shown.mask;
  else shown.mask = current.mask;
  // The mask just evaluated is the one shown when the patch kept it (a changed mask needs reveal anyway).
  const view = await present(
    deps,
    shown,
    transform,
    async () => data ?? openData(deps, next),
    masked && patch.mask === undefined ? { masked, failOnMaskError: true } : { failOnMaskError: true },
  );
  if (next.mask === undefined) delete view.mask;
  else view.mask = next.mask;

  const outcome = await deps.tokens.replace(
    next,
    current.version,
    tokenEvent(
      deps,
      principal,
      next,
      "update",
      transaction ? `Token update pending in transaction ${transaction.id}` : "Token updated",
    ),
    {
      now: deps.clock.now(),
      transaction: hold,
      previous: current,
      previousFingerprint: current.fingerprint,
      ...(current.search_hashes ? { previousSearchHashes: current.search_hashes } : {}),
    },
  );
  assertWritten(outcome);
  // An answer carrying data is a read too; logged before it leaves (fail-closed).
  if (view.data !== undefined)
    await recordTokenReads(deps, principal, [next], "Token read in an update answer");
  return view;
}

/** Fields whose expressions are evaluated on the stored data: changing them takes reveal-level token:update. */
const EVALUATED_FIELDS = ["mask", "fingerprint_expression", "search_indexes"] as const;

/**
 * What a patch changes that takes reveal-level token:update (on both containers when the token moves): the
 * fields evaluated on the stored data, and the container itself, which decides who may see the data (a move
 * into a container where the caller, or another key, reveals would read the data past the caller's transform).
 */
export function revealChanges(patch: PatchTokenInput, moves: boolean): string[] {
  const changes: string[] = EVALUATED_FIELDS.filter((field) => patch[field] !== undefined);
  if (moves) changes.push("containers");
  return changes;
}

/** Whether `next` (ISO 8601) ends the token's life sooner than `current` (none: never). */
export function shortens(current: string | undefined, next: string): boolean {
  return current === undefined || Date.parse(next) < Date.parse(current);
}

export async function deleteToken(
  deps: TokenDeps,
  principal: TenantPrincipal,
  id: string,
  transaction?: TransactionContext,
): Promise<void> {
  const token = await tokenToWrite(deps, principal, id);
  const grant = accessOf(principal);
  requireAccess(grant, token, "token:delete");
  const hold = holdTokens(grant, [token], transaction);
  await releaseStaleHold(deps, token);
  const message = transaction ? `Token deletion pending in transaction ${transaction.id}` : "Token deleted";
  const outcome = await deps.tokens.delete(token, tokenEvent(deps, principal, token, "delete", message), {
    now: deps.clock.now(),
    transaction: hold,
  });
  assertWritten(outcome);
}

/** 409 for a token that changed, vanished or is held by a transaction; 404 for a transaction that closed. */
function assertWritten(outcome: WriteOutcome): void {
  if (outcome === "transaction-closed") throw notFound("The transaction");
  if (outcome === "conflict")
    throw conflict(
      "The token changed, or an open transaction holds it (one change per token per transaction); retry later.",
    );
}
