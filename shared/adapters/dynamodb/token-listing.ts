import type { DynamoDBDocumentClient, QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { validationError } from "#shared/domain/errors.ts";
import type { StoredToken, TokenListFilter } from "#shared/domain/tokens/token.ts";
import { isEmpty } from "#shared/domain/tokens/visibility.ts";
import type { PageRequest, StorePage } from "#shared/ports/stores.ts";
import { FilterBuilder } from "./filter-builder.ts";
import { countQuery, decodeCursor, encodeCursor, queryUpTo } from "./paging.ts";
import { epochSeconds, TABLE_KEYS } from "./schema.ts";
import { tokenFromItem } from "./token-items.ts";
import { TOKEN_SHARDS, tokenKeys } from "./token-keys.ts";

/** Offset paging of tokens reads page × size entries per shard, so it is capped; use `start` beyond. */
export const MAX_TOKEN_OFFSET = 10_000;

/** The filter of a listing: live, committed tokens of the wanted types, metadata and visibility. */
function listingFilter(filter: TokenListFilter): FilterBuilder | undefined {
  const expression = new FilterBuilder();
  expression.add(
    `(attribute_not_exists(${expression.name("expires_epoch")}) OR ${expression.name("expires_epoch")} > ${expression.value(epochSeconds(filter.now))})`,
  );
  // Tokens created in a transaction stay invisible until it commits.
  expression.add(
    `(attribute_not_exists(${expression.name("txn_op")}) OR ${expression.name("txn_op")} <> ${expression.value("create")})`,
  );
  if (filter.types?.length)
    expression.add(
      `${expression.name("type")} IN (${filter.types.map((t) => expression.value(t)).join(", ")})`,
    );
  if (filter.containerPrefix !== undefined)
    expression.add(
      `begins_with(${expression.name("container")}, ${expression.value(filter.containerPrefix)})`,
    );
  if (filter.fingerprint !== undefined)
    expression.add(`${expression.name("fingerprint")} = ${expression.value(filter.fingerprint)}`);
  for (const [key, value] of Object.entries(filter.metadata ?? {}))
    expression.add(`${expression.name("metadata_lc")}.${expression.name(key)} = ${expression.value(value)}`);
  if (filter.visibility) {
    // Nothing is visible: no query at all.
    if (isEmpty(filter.visibility)) return undefined;
    // Each grant's clauses must hold (a session's and its application's): one OR group per grant, ANDed.
    for (const set of filter.visibility) {
      const clauses = set.map((clause) => {
        const parts: string[] = [];
        if (clause.containerPrefix !== undefined)
          parts.push(
            `begins_with(${expression.name("container")}, ${expression.value(clause.containerPrefix)})`,
          );
        if (clause.containerEquals !== undefined)
          parts.push(`${expression.name("container")} = ${expression.value(clause.containerEquals)}`);
        if (clause.idEquals !== undefined)
          parts.push(`${expression.name("id")} = ${expression.value(clause.idEquals)}`);
        if (clause.idPrefix !== undefined)
          parts.push(`begins_with(${expression.name("id")}, ${expression.value(clause.idPrefix)})`);
        return parts.length ? parts.join(" AND ") : "attribute_exists(PK)";
      });
      // DynamoDB refuses redundant parentheses: group only where precedence needs it.
      const many = clauses.length > 1;
      expression.add(
        many
          ? `(${clauses.map((c) => (c.includes(" AND ") ? `(${c})` : c)).join(" OR ")})`
          : (clauses[0] as string),
      );
    }
  }
  return expression;
}

function shardQuery(
  tableName: string,
  tenantId: string,
  expression: FilterBuilder,
  shard: number,
  upper: string,
) {
  return {
    TableName: tableName,
    IndexName: TABLE_KEYS.gsi1Name,
    KeyConditionExpression: "#gpk = :gpk AND #gsk < :upper",
    FilterExpression: expression.text(),
    ExpressionAttributeNames: {
      ...expression.names,
      "#gpk": TABLE_KEYS.gsi1PartitionKey,
      "#gsk": TABLE_KEYS.gsi1SortKey,
    },
    ExpressionAttributeValues: {
      ...expression.values,
      ":gpk": tokenKeys.listing(tenantId, shard),
      ":upper": upper,
    },
    ScanIndexForward: false,
  } satisfies QueryCommandInput;
}

/** Items a cursor page evaluates per shard: enough for a full page when most match, never more. */
export const cursorPageReads = (size: number) => Math.min(Math.max(4 * (size + 1), 100), 1000);

/**
 * A page of a tenant's tokens for cursor paging, newest first, below `after` (a listing position): one query per
 * shard, each evaluating at most cursorPageReads(size) items, and no count. So a page costs the same whatever the
 * tenant's size and however few tokens the filter matches; a selective filter may answer fewer than `size` tokens
 * (even none) with a `next` to go on from. `next` is a listing position, for the caller to seal.
 */
export async function listTokenPage(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  filter: TokenListFilter,
  size: number,
  after: string | undefined,
): Promise<{ items: StoredToken[]; next?: string }> {
  const expression = listingFilter(filter);
  if (!expression) return { items: [] };
  const shards = Array.from({ length: TOKEN_SHARDS }, (_, shard) => shard);
  const reads = cursorPageReads(size);
  const outs = await Promise.all(
    shards.map((shard) =>
      client.send(
        new QueryCommand({
          ...shardQuery(tableName, tenantId, expression, shard, after ?? "~"),
          Limit: reads,
        }),
      ),
    ),
  );
  // Each shard not read to its end stopped at a position; below the highest of those, some shard is unread, so
  // only tokens at or above it may be answered (the next page goes on from there).
  const stops = outs.flatMap((out) => (out.LastEvaluatedKey ? [String(out.LastEvaluatedKey.GSI1SK)] : []));
  const frontier = stops.sort().at(-1);
  const matches = outs
    .flatMap((out) => (out.Items ?? []) as Record<string, unknown>[])
    .filter((item) => frontier === undefined || String(item.GSI1SK) >= frontier)
    .sort((a, b) => String(b.GSI1SK).localeCompare(String(a.GSI1SK)));
  const page = matches.slice(0, size);
  const next = matches.length > size ? String(page.at(-1)?.GSI1SK) : frontier;
  return { items: page.map(tokenFromItem), ...(next !== undefined ? { next } : {}) };
}

/** A page of a tenant's tokens, newest first, merged from every listing shard, with the total that match. */
export async function listTokens(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  filter: TokenListFilter,
  page: PageRequest,
): Promise<StorePage<StoredToken>> {
  const cursor = page.start === undefined ? undefined : decodeCursor(page.start);
  if (page.start !== undefined && cursor === undefined) throw validationError("The start cursor is invalid.");
  const offset = cursor ? 0 : (page.page - 1) * page.size;
  if (offset + page.size > MAX_TOKEN_OFFSET)
    throw validationError(
      `Offset paging is limited to the first ${MAX_TOKEN_OFFSET} tokens; use the start cursor from pagination.next.`,
    );
  const expression = listingFilter(filter);
  if (!expression) return { items: [], total: 0 };
  const base = (shard: number, upper: string): QueryCommandInput =>
    shardQuery(tableName, tenantId, expression, shard, upper);
  const shards = Array.from({ length: TOKEN_SHARDS }, (_, shard) => shard);
  const wanted = offset + page.size + 1;
  const [chunks, counts] = await Promise.all([
    Promise.all(shards.map((shard) => queryUpTo(client, base(shard, cursor ?? "~"), wanted))),
    Promise.all(shards.map((shard) => countQuery(client, base(shard, "~")))),
  ]);
  const merged = chunks.flat().sort((a, b) => String(b.GSI1SK).localeCompare(String(a.GSI1SK)));
  const pageItems = merged.slice(offset, offset + page.size);
  const last = pageItems.at(-1);
  return {
    items: pageItems.map(tokenFromItem),
    total: counts.reduce((sum, n) => sum + n, 0),
    ...(merged.length > offset + page.size && last ? { next: encodeCursor(String(last.GSI1SK)) } : {}),
  };
}
