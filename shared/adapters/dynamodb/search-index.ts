import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { TokenRef } from "#shared/domain/access-rules.ts";
import { hashVersionOf } from "#shared/domain/keys/key-refs.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";
import { SEARCH_SCAN_ITEMS } from "#shared/ports/stores.ts";
import { transactOrFalse } from "./client.ts";
import { OWN_TRANSACT_ITEMS } from "./limits.ts";
import { batchGetTokenItems } from "./token-batch-get.ts";
import { tokenKeys } from "./token-keys.ts";

/**
 * The containers of tokens whose lookup items name none (written before items carried it): read from the token
 * items, so such an entry is passed over like any other the caller may not see (else hidden matches stored
 * before the upgrade still used up the caller's pages, and counted). A token gone answers no container.
 */
async function containersOf(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  ids: string[],
): Promise<Map<string, string>> {
  const { items } = await batchGetTokenItems(client, tableName, tenantId, ids, {
    attributes: ["id", "tenant_id", "container"],
    what: "Token containers",
  });
  const found = new Map<string, string>();
  for (const item of items)
    if (typeof item.container === "string") found.set(String(item.id), item.container);
  return found;
}

/**
 * Blind-index lookup items: one per search hash of a token, keyed by the hash (an HMAC under the tenant's
 * search key version, never the value) so a `data:` search is a Query on one partition, whatever the tenant's
 * size. The token item stays the truth: a search reads the tokens it finds and keeps only those whose current
 * `search_hashes` still hold the hash, so a lookup item left behind (a PATCH, a delete, a crash between) can
 * never answer a token, and is removed when met.
 */
export const searchKeys = {
  entry: (tenantId: string, version: number, hash: string) => `SEARCH#${tenantId}#v${version}#${hash}`,
} as const;

/** Under the HMAC version the hash names (key-refs.ts), so each version's lookups are their own partitions. */
export function searchEntryKey(token: Pick<StoredToken, "tenant_id" | "id">, hash: string) {
  return { PK: searchKeys.entry(token.tenant_id, hashVersionOf(hash), hash), SK: `TOKEN#${token.id}` };
}

/**
 * The lookup items of a token's search hashes: written in the same transaction as the token item. `container:
 * false` for a version staged in a transaction that moves the token: the live token keeps its container until the
 * commit, and a rollback writes nothing back, so an item naming either container could be stale for good; one
 * naming none is answered and checked against the token item by the caller.
 */
export function tokenSearchPuts(
  tableName: string,
  token: StoredToken,
  options: { container?: boolean } = {},
) {
  return [...new Set(token.search_hashes ?? [])].map((hash) => ({
    Put: {
      TableName: tableName,
      Item: {
        ...searchEntryKey(token, hash),
        entity: "search_entry",
        tenant_id: token.tenant_id,
        token_id: token.id,
        // Every write of the token writes its lookup items again: a move rewrites the container too.
        ...(options.container === false ? {} : { container: token.container }),
        key_version: hashVersionOf(hash),
      },
    },
  }));
}

/**
 * Removes the lookup items of hashes a token no longer has (after a PATCH, a delete or its expiry), each only while
 * the token does not hold it again: a write giving the token a dropped hash back between the write that dropped it
 * and this removal (a second PATCH to the earlier value, a delete or expiry then a create under the same id) wrote
 * the item this removal would delete, and the token was found by that value no more until its next write (key
 * custody review; the expiry sweep's removal was still unconditional, stop 50's review). A refused condition
 * leaves the item: the answer, not a failure. Best effort (a search ignores and removes any left behind).
 */
export async function removeDroppedSearchEntries(
  client: DynamoDBDocumentClient,
  tableName: string,
  owner: Pick<StoredToken, "tenant_id" | "id">,
  dropped: readonly string[],
): Promise<void> {
  const unique = [...new Set(dropped)];
  const stale = (hashes: string[]) => ({
    ConditionCheck: {
      TableName: tableName,
      Key: tokenKeys.token(owner.tenant_id, owner.id),
      ConditionExpression: `attribute_not_exists(PK) OR (attribute_not_exists(txn_id) AND ${hashes
        .map((_, j) => `NOT contains(search_hashes, :h${j})`)
        .join(" AND ")})`,
      ExpressionAttributeValues: Object.fromEntries(hashes.map((hash, j) => [`:h${j}`, hash])),
    },
  });
  const remove = (hashes: string[]) =>
    transactOrFalse(client, [
      stale(hashes),
      ...hashes.map((hash) => ({ Delete: { TableName: tableName, Key: searchEntryKey(owner, hash) } })),
    ]);
  for (let i = 0; i < unique.length; i += OWN_TRANSACT_ITEMS - 1) {
    const hashes = unique.slice(i, i + OWN_TRANSACT_ITEMS - 1);
    // Refused: one of them is the token's again (or it is held); each of the others goes on its own condition.
    if (!(await remove(hashes)) && hashes.length > 1) for (const hash of hashes) await remove([hash]);
  }
}

/** Lookup items one Query asks for (small items: one request, well under DynamoDB's 1 MB page). */
const QUERY_ITEMS = 250;

/**
 * Token ids under the lookup partitions of `hashes` (one per token type), in order: partition by partition,
 * token id ascending. `after` is `<partition index>:<token id>`, each entry's `position` the one just after it. An item whose container `visible` refuses is
 * passed over, never answered and never counted toward `size` (written since 27 Nov 2026, items carry the
 * container; older ones are answered and checked by the caller): so hidden matches use up no page of the caller's,
 * up to SEARCH_SCAN_ITEMS examined per call, after which the call answers what it has with a `next` past them.
 * Each partition's first Query is sent at once: one round trip for the common case (docs/scale.md).
 */
export async function searchEntries(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  hashes: readonly string[],
  size: number,
  after: string | undefined,
  visible: (token: TokenRef) => boolean = () => true,
): Promise<{ entries: { hash: string; tokenId: string; position: string }[]; next?: string }> {
  let first = 0;
  let afterId: string | undefined;
  if (after !== undefined) {
    const at = after.indexOf(":");
    first = Number(after.slice(0, at));
    afterId = after.slice(at + 1);
  }
  const left = hashes.slice(first);
  const limit = Math.min(Math.max(size, QUERY_ITEMS), SEARCH_SCAN_ITEMS);
  const query = (hash: string, resume: string | undefined) =>
    client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: resume === undefined ? "PK = :pk" : "PK = :pk AND SK > :after",
        ExpressionAttributeValues: {
          ":pk": searchKeys.entry(tenantId, hashVersionOf(hash), hash),
          ...(resume === undefined ? {} : { ":after": `TOKEN#${resume}` }),
        },
        Limit: limit,
      }),
    );
  const firstPages = await Promise.all(left.map((hash, k) => query(hash, k === 0 ? afterId : undefined)));
  const entries: { hash: string; tokenId: string; position: string }[] = [];
  let examined = 0;
  for (const [k, hash] of left.entries()) {
    let page = firstPages[k];
    let last = k === 0 ? afterId : undefined;
    while (page) {
      const items = page.Items ?? [];
      const legacy = items
        .filter((item) => typeof item.container !== "string")
        .map((item) => String(item.token_id));
      const resolved = legacy.length ? await containersOf(client, tableName, tenantId, legacy) : new Map();
      for (const [i, item] of items.entries()) {
        const tokenId = String(item.token_id);
        last = tokenId;
        examined += 1;
        const container = typeof item.container === "string" ? item.container : resolved.get(tokenId);
        // A token gone (no container) is answered: the caller removes its stale entry.
        if (typeof container !== "string" || visible({ id: tokenId, container }))
          entries.push({ hash, tokenId, position: `${first + k}:${tokenId}` });
        const full = entries.length >= size;
        if (full || examined >= SEARCH_SCAN_ITEMS) {
          // Go on after this item, unless nothing can follow (an empty next page is possible, and harmless).
          const more = i + 1 < items.length || page.LastEvaluatedKey !== undefined || k + 1 < left.length;
          return more ? { entries, next: `${first + k}:${last}` } : { entries };
        }
      }
      page = page.LastEvaluatedKey === undefined ? undefined : await query(hash, last);
    }
  }
  return { entries };
}
