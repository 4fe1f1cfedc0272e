import { createHash } from "node:crypto";
import { normalizeContainer, type Transform } from "#shared/domain/access-rules.ts";
import { itemsThatFit } from "#shared/domain/answer-size.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { recordTokenReads } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { validationError } from "#shared/domain/errors.ts";
import { countTokens } from "#shared/observability/count-tokens.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import { accessOf, listingVisibility, searchTransform } from "./access.ts";
import type { TokenDeps } from "./deps.ts";
import { present } from "./presenting.ts";
import { openData } from "./sealing.ts";
import { isLive, listingPosition, type StoredToken, type TokenListFilter } from "./token.ts";

/** The filters of GET /v2/tokens (the hosted vault's, and `metadata.<key>`). */
export interface CursorListQuery {
  types?: string[];
  container?: string;
  fingerprint?: string;
  /** Keys and values as given; matched case-insensitively. */
  metadata?: Record<string, string>;
}

/** `v1.<key id>.<iv>.<tag>.<ciphertext>`, as Sealer.seal writes it (key ids are `k<period>`). */
const SEALED_CURSOR = /^v1\.k\d{1,12}\.[\w-]{16}\.[\w-]{22}\.[\w-]{1,2000}$/;

const INVALID_CURSOR =
  "The start cursor is invalid, or was issued for another query or tenant; start again without it.";

/**
 * What a cursor is bound to, besides its tenant (whose data key seals it): the filters, normalized. A cursor is
 * only good for the query that issued it (page size may change between pages).
 */
function queryDigest(filter: Omit<TokenListFilter, "now" | "visibility">): string {
  const canonical = JSON.stringify([
    [...(filter.types ?? [])].sort(),
    filter.containerPrefix ?? null,
    filter.fingerprint ?? null,
    Object.entries(filter.metadata ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]);
  return createHash("sha256").update(canonical, "utf8").digest("base64url");
}

/** `scope`: the route a cursor is for (a search's cursor never opens as a listing's, nor the other way). */
export const cursorBinding = (tenantId: string, digest: string, scope = "v2/tokens") => ({
  tenantId,
  tokenId: `cursor:${scope}`,
  field: `query:${digest}`,
});

/** Opens a `start` cursor sealed under `binding`; a 400 naming nothing when it is not one. */
export async function openCursor(
  deps: Pick<TokenDeps, "sealer">,
  binding: ReturnType<typeof cursorBinding>,
  start: string,
): Promise<string> {
  try {
    // Shaped as the sealer writes them before anything is looked up (its key id names a stored key).
    if (!SEALED_CURSOR.test(start)) throw new Error("not sealed");
    return await deps.sealer.open(binding, start);
  } catch {
    throw validationError(INVALID_CURSOR, { start: ["not a cursor of this query"] });
  }
}

/** How a search reuses the listing: its own cursor scope, and its query's audit entry beside the reads. */
/** Store pages one listing or search reads at most to fill the caller's page. */
const PAGES_READ = 10;

/** A token a page shows, and the store position just after it (where a page cut short after it goes on). */
export type Shown = { token: StoredToken; transform: Transform; position: string };

/**
 * The end of every cursor page (listing and search): the shown tokens presented, the page stopped where its answer
 * would outgrow what one holds (MAX_PAGE_BYTES) with `next` just after its last token (a token shown follows it,
 * so `next` says nothing a full page would not), then only the tokens answered logged as read and counted, and
 * `next` sealed.
 */
export async function finishPage(
  deps: TokenDeps,
  principal: TenantPrincipal,
  page: { shown: Shown[]; next?: string },
  options: { size: number; binding: ReturnType<typeof cursorBinding>; message: string; also?: LogEntry[] },
) {
  const presented = await Promise.all(
    page.shown.map(({ token, transform }) => present(deps, token, transform, () => openData(deps, token))),
  );
  const fit = itemsThatFit(presented);
  const kept = page.shown.slice(0, fit);
  const resume = fit < page.shown.length ? kept.at(-1)?.position : page.next;
  await recordTokenReads(
    deps,
    principal,
    kept.map(({ token }) => token),
    options.message,
    options.also,
  );
  countTokens(deps, METRIC.tokensRead, principal.tenantId, kept.length);
  const next = resume === undefined ? undefined : await deps.sealer.seal(options.binding, resume);
  return {
    pagination: { page_size: options.size, ...(next ? { next } : {}) },
    data: presented.slice(0, fit),
  };
}

/**
 * A caller's page: store pages read (`read(wanted, after)`, each answering what it `shows`) until `size` are shown or
 * the matches end, at most PAGES_READ. So `next` (the position after the last page read, while more may follow)
 * never says, after an empty page, that matches the caller may not see exist. Where `read` drops matches the
 * store answered (a search of the blind index, which holds every token's entries), those use up the pages too:
 * with `hiddenMatches`, a page that shows nothing has no `next` even at the bound, and a full page has one only
 * when a match shown follows it (looked ahead for, within the bound), so its answer is the same whether such
 * matches exist or not.
 */
export async function fillPage(
  size: number,
  after: string | undefined,
  read: (wanted: number, after: string | undefined) => Promise<{ shown: Shown[]; next?: string }>,
  options: { hiddenMatches?: boolean } = {},
): Promise<{ shown: Shown[]; next?: string }> {
  const shown: Shown[] = [];
  let position = after;
  let pages = 0;
  for (; pages < PAGES_READ && shown.length < size; pages++) {
    const page = await read(size - shown.length, position);
    shown.push(...page.shown);
    position = page.next;
    if (position === undefined) return { shown };
  }
  if (!options.hiddenMatches) return { shown, next: position };
  if (shown.length === 0) return { shown };
  // A full page's `next` says only that a match the caller may see follows: the store's position says that
  // something follows (a hidden match too), so a caller planting its own match under an id that sorts first learnt
  // from `next` whether a token it may not see shares the value (search review). Look ahead, within the same
  // bound of pages read, for one more match shown; `next` still points just past the page, so it is shown next.
  for (let peek: string | undefined = position; pages < PAGES_READ; pages++) {
    const page = await read(1, peek);
    if (page.shown.length > 0) return { shown, next: position };
    peek = page.next;
    if (peek === undefined) return { shown };
  }
  return { shown, next: position };
}

export interface CursorListOptions {
  scope?: string;
  also?: LogEntry[];
  /** POST /v2/tokens/search: each token also needs `token:search` (searchTransform). */
  search?: boolean;
}

/**
 * GET /v2/tokens: a page of the tenant's tokens the caller may read, newest first, as reads present them, each
 * logged as a read (as GET /tokens does). `start` is the `next` of the previous page: sealed (AES-GCM) under the
 * tenant's data key and bound to the query, so it opens for no other tenant or query, and reveals nothing.
 * No total: a page reads what it needs, whatever the tenant's size.
 */
export async function listTokensByCursor(
  deps: TokenDeps,
  principal: TenantPrincipal,
  query: CursorListQuery,
  size: number,
  start: string | undefined,
  options: CursorListOptions = {},
) {
  let containerPrefix: string | undefined;
  if (query.container !== undefined) {
    containerPrefix = normalizeContainer(query.container);
    if (!containerPrefix)
      throw validationError("The container is invalid.", {
        container: ["must start and end with / and hold segments of [a-z0-9_-]"],
      });
  }
  const metadata = query.metadata
    ? Object.fromEntries(Object.entries(query.metadata).map(([k, v]) => [k.toLowerCase(), v.toLowerCase()]))
    : undefined;
  const filters = {
    ...(query.types?.length ? { types: query.types } : {}),
    ...(containerPrefix ? { containerPrefix } : {}),
    ...(query.fingerprint !== undefined ? { fingerprint: query.fingerprint } : {}),
    ...(metadata ? { metadata } : {}),
  };
  const binding = cursorBinding(principal.tenantId, queryDigest(filters), options.scope);
  const after = start === undefined ? undefined : await openCursor(deps, binding, start);

  const grant = accessOf(principal);
  const fingerprint = query.fingerprint !== undefined;
  const visibility = listingVisibility(grant, {
    search: options.search,
    fingerprint,
    scope: containerPrefix,
  });
  const now = deps.clock.now();
  const page = await fillPage(size, after, async (wanted, at) => {
    const stored = await deps.tokens.page(principal.tenantId, { ...filters, visibility, now }, wanted, at);
    return {
      next: stored.next,
      shown: stored.items.flatMap((token) => {
        if (!isLive(token, now)) return [];
        const transform = options.search
          ? searchTransform(grant, token)
          : grant.evaluate(token, "token:read");
        // The store answered only what the caller may see as asked (listingVisibility); checked again here.
        return transform && (!fingerprint || transform === "reveal")
          ? [{ token, transform, position: listingPosition(token) }]
          : [];
      }),
    };
  });
  return finishPage(deps, principal, page, {
    size,
    binding,
    message: "Token read in a list",
    also: options.also,
  });
}
