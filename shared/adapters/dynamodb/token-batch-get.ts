import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { BatchGetCommand } from "@aws-sdk/lib-dynamodb";
import { BATCH_GET_KEYS } from "./limits.ts";
import { tokenKeys } from "./token-keys.ts";

/**
 * Token items of one tenant by id, BATCH_GET_KEYS at a time, unprocessed keys asked again (6 tries): the items that
 * name that tenant (the key alone is not the tenant boundary), and how many ids could not be read.
 */
export async function batchGetTokenItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  ids: readonly string[],
  options: { consistent?: boolean; attributes?: readonly string[] } = {},
): Promise<{ items: Record<string, unknown>[]; unread: number }> {
  const unique = [...new Set(ids)];
  const items: Record<string, unknown>[] = [];
  const projection = options.attributes && {
    ProjectionExpression: options.attributes.map((_, i) => `#a${i}`).join(", "),
    ExpressionAttributeNames: Object.fromEntries(options.attributes.map((name, i) => [`#a${i}`, name])),
  };
  let unread = 0;
  for (let i = 0; i < unique.length; i += BATCH_GET_KEYS) {
    let keys: Record<string, unknown>[] = unique
      .slice(i, i + BATCH_GET_KEYS)
      .map((id) => tokenKeys.token(tenantId, id));
    for (let attempt = 0; keys.length > 0 && attempt < 6; attempt++) {
      const out = await client.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: keys,
              ...(options.consistent ? { ConsistentRead: true } : {}),
              ...projection,
            },
          },
        }),
      );
      for (const item of out.Responses?.[tableName] ?? []) if (item.tenant_id === tenantId) items.push(item);
      keys = (out.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
    unread += keys.length;
  }
  return { items, unread };
}
