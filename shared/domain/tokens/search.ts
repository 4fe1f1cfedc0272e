import { createHash } from "node:crypto";
import { normalizeContainer } from "#shared/domain/access-rules.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { auditEvent } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { validationError } from "#shared/domain/errors.ts";
import { liveSearchHashes } from "../keys/dual-lookup.ts";
import { accessOf, searchTransform } from "./access.ts";
import type { TokenDeps } from "./deps.ts";
import {
  cursorBinding,
  fillPage,
  finishPage,
  listTokensByCursor,
  openCursor,
  type Shown,
} from "./list-cursor.ts";
import { type ParsedSearch, parseSearchQuery } from "./search-query.ts";
import { isLive } from "./token.ts";

const SEARCH_SCOPE = "v2/tokens/search";

/**
 * The query's audit entry: the search is logged by an HMAC of its text under the tenant's key (equal queries
 * compare in the log), never the text, which may hold the searched value.
 */
async function searchEvent(deps: TokenDeps, principal: TenantPrincipal, query: string): Promise<LogEntry> {
  const digest = await deps.sealer.fingerprint(principal.tenantId, "search-query", query.trim());
  return auditEvent(
    deps,
    principal,
    "token",
    `search:${digest}`,
    "read",
    `Tokens searched (query HMAC ${digest})`,
  );
}

function containerPrefixOf(container: string): string {
  const prefix = normalizeContainer(container);
  if (!prefix)
    throw validationError("The container is invalid.", {
      query: ["container: must start and end with / and hold segments of [a-z0-9_-]"],
    });
  return prefix;
}

/**
 * POST /v2/tokens/search: tokens the caller may read that match the query, presented as reads are, each logged
 * as a read, the query logged by its HMAC. `data:` is a lookup of blind-index items (one partition per token
 * type, whatever the tenant's size); the other terms are the cursor listing's filters.
 */
export async function searchTokens(
  deps: TokenDeps,
  principal: TenantPrincipal,
  body: { query: string; size: number; start?: string },
) {
  const parsed = parseSearchQuery(body.query);
  const also = [await searchEvent(deps, principal, body.query)];
  const { term } = parsed;
  if (term.kind === "data") return searchData(deps, principal, parsed, term.value, body, also);
  const filters = {
    ...(term.kind === "type" ? { types: [term.value] } : {}),
    ...(term.kind === "fingerprint" ? { fingerprint: term.value } : {}),
    ...(term.kind === "metadata" ? { metadata: { [term.key]: term.value } } : {}),
    ...(term.kind === "container" ? { container: term.value } : {}),
    ...(parsed.container !== undefined ? { container: parsed.container } : {}),
  };
  return listTokensByCursor(deps, principal, filters, body.size, body.start, {
    scope: SEARCH_SCOPE,
    also,
    search: true,
  });
}

async function searchData(
  deps: TokenDeps,
  principal: TenantPrincipal,
  parsed: ParsedSearch,
  value: string,
  body: { size: number; start?: string },
  also: LogEntry[],
) {
  const { tenantId } = principal;
  const containerPrefix = parsed.container === undefined ? undefined : containerPrefixOf(parsed.container);
  // One blind index per token type (the hash is scoped by type) and live HMAC version, current last (during a
  // rewrap, tokens not yet re-hashed are found under the earlier version): the same order on every page.
  const hashes = await liveSearchHashes(deps, tenantId, value);
  // The cursor is bound to the hashes (not the value) and the container.
  const digest = createHash("sha256")
    .update(JSON.stringify(["data", hashes, containerPrefix ?? null]), "utf8")
    .digest("base64url");
  const binding = cursorBinding(tenantId, digest, SEARCH_SCOPE);
  const after = body.start === undefined ? undefined : await openCursor(deps, binding, body.start);

  const grant = accessOf(principal);
  const now = deps.clock.now();
  const page = await fillPage(
    body.size,
    after,
    async (wanted, at) => {
      // Matches the caller may not see are passed over by the store by their container (never fetched, never
      // counted against the pages read): a caller planting its own match could otherwise count them (review, 27 Nov).
      const found = await deps.tokens.searchEntries(
        tenantId,
        hashes,
        wanted,
        at,
        (ref) =>
          (!containerPrefix || ref.container.startsWith(containerPrefix)) &&
          searchTransform(grant, ref) !== undefined,
      );
      const tokens = await deps.tokens.getMany(
        tenantId,
        found.entries.map((entry) => entry.tokenId),
      );
      const byId = new Map(tokens.map((token) => [token.id, token]));
      const page: Shown[] = [];
      for (const entry of found.entries) {
        const token = byId.get(entry.tokenId);
        // The token item is the truth: a lookup item of a hash it no longer has (PATCHed, deleted) is stale. But
        // not while a transaction holds the token: its staged update wrote the lookup items of its new hashes,
        // which the token item takes only at the commit (and the commit does not write them again).
        if (!token?.search_hashes?.includes(entry.hash)) {
          if (!token?.lock)
            await deps.tokens.removeStaleSearchEntry({ tenant_id: tenantId, id: entry.tokenId }, entry.hash);
          continue;
        }
        if (!isLive(token, now)) continue;
        if (
          containerPrefix &&
          !(token.container === containerPrefix || token.container.startsWith(containerPrefix))
        )
          continue;
        const transform = searchTransform(grant, token);
        if (transform) page.push({ token, transform, position: entry.position });
      }
      return { shown: page, next: found.next };
    },
    { hiddenMatches: true },
  );
  return finishPage(deps, principal, page, {
    size: body.size,
    binding,
    message: "Token read in a search",
    also,
  });
}
