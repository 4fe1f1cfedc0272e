import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { hashVersionOf } from "#shared/domain/keys/key-refs.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";
import { BATCH_WRITE_ITEMS } from "./limits.ts";

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
function entryKey(token: Pick<StoredToken, "tenant_id" | "id">, hash: string) {
  return { PK: searchKeys.entry(token.tenant_id, hashVersionOf(hash), hash), SK: `TOKEN#${token.id}` };
}

/** The lookup items of a token's search hashes: written in the same transaction as the token item. */
export function tokenSearchPuts(tableName: string, token: StoredToken) {
  return [...new Set(token.search_hashes ?? [])].map((hash) => ({
    Put: {
      TableName: tableName,
      Item: {
        ...entryKey(token, hash),
        entity: "search_entry",
        tenant_id: token.tenant_id,
        token_id: token.id,
        key_version: hashVersionOf(hash),
      },
    },
  }));
}

/** Removes lookup items of hashes a token no longer has (after a PATCH, a delete or expiry). Best effort. */
export async function removeSearchEntries(
  client: DynamoDBDocumentClient,
  tableName: string,
  token: Pick<StoredToken, "tenant_id" | "id">,
  hashes: readonly string[],
): Promise<void> {
  const unique = [...new Set(hashes)];
  for (let i = 0; i < unique.length; i += BATCH_WRITE_ITEMS) {
    const chunk = unique.slice(i, i + BATCH_WRITE_ITEMS);
    await client.send(
      new BatchWriteCommand({
        RequestItems: {
          [tableName]: chunk.map((hash) => ({ DeleteRequest: { Key: entryKey(token, hash) } })),
        },
      }),
    );
  }
}

/**
 * Token ids under the lookup partitions of `hashes` (one per token type), in order: partition by partition,
 * token id ascending. `after` is `<partition index>:<token id>`. Each partition left is queried at once, each
 * reading at most `size` items: one round trip instead of one per token type (docs/scale.md), and a page of at
 * most `size` entries is cut from them in order.
 */
export async function searchEntries(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  hashes: readonly string[],
  size: number,
  after: string | undefined,
): Promise<{ entries: { hash: string; tokenId: string }[]; next?: string }> {
  let first = 0;
  let afterId: string | undefined;
  if (after !== undefined) {
    const at = after.indexOf(":");
    first = Number(after.slice(0, at));
    afterId = after.slice(at + 1);
  }
  const left = hashes.slice(first);
  const answers = await Promise.all(
    left.map((hash, k) => {
      const resume = k === 0 ? afterId : undefined;
      return client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: resume === undefined ? "PK = :pk" : "PK = :pk AND SK > :after",
          ExpressionAttributeValues: {
            ":pk": searchKeys.entry(tenantId, hashVersionOf(hash), hash),
            ...(resume === undefined ? {} : { ":after": `TOKEN#${resume}` }),
          },
          Limit: size,
        }),
      );
    }),
  );
  const entries: { hash: string; tokenId: string }[] = [];
  for (const [k, answer] of answers.entries()) {
    const hash = left[k] as string;
    const items = answer.Items ?? [];
    const taken = items.slice(0, size - entries.length);
    for (const item of taken) entries.push({ hash, tokenId: String(item.token_id) });
    if (entries.length >= size) {
      const last = entries[entries.length - 1] as { tokenId: string };
      // A full page: go on after its last item (an empty next page is possible, and harmless).
      const more =
        taken.length < items.length || answer.LastEvaluatedKey !== undefined || k + 1 < left.length;
      return more ? { entries, next: `${first + k}:${last.tokenId}` } : { entries };
    }
  }
  return { entries };
}
