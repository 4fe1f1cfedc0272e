import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { BatchGetCommand } from "@aws-sdk/lib-dynamodb";
import { BATCH_GET_KEYS } from "./limits.ts";
import { tokenKeys } from "./token-keys.ts";

/**
 * Keys a BatchGet still left unprocessed after its tries: DynamoDB's throttling, answered as such (no error of its
 * own), so a caller that needs every item fails as an outage the client retries (503, shared/http/outage.ts), not
 * as an unexpected 500 (round-4 review: a transaction's commit whose check read was throttled answered 500).
 */
export class UnreadItems extends Error {
  override readonly name = "ProvisionedThroughputExceededException";
  constructor(what: string) {
    super(`${what} could not be read (throttled)`);
  }
}

/** Waits before asking again for unprocessed keys (as the SDK backs off a throttled call): 20 ms, doubled. */
const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));

/**
 * Token items of one tenant by id, BATCH_GET_KEYS at a time, unprocessed keys asked again (6 tries): the items that
 * name that tenant (the key alone is not the tenant boundary). Keys still unread throw UnreadItems (`what` names
 * them): answered as absent, getMany's callers took a throttled token for one that does not exist (round-4 review).
 */
export async function batchGetTokenItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  ids: readonly string[],
  options: { consistent?: boolean; attributes?: readonly string[]; what?: string } = {},
): Promise<{ items: Record<string, unknown>[] }> {
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
      if (attempt > 0) await backoff(attempt - 1);
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
  if (unread > 0) throw new UnreadItems(options.what ?? "Tokens");
  return { items };
}
