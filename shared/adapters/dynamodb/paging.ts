import type { DynamoDBDocumentClient, QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";

type Item = Record<string, unknown>;

/** Reads items of one query in order until `wanted` are collected or the partition ends. */
export async function queryUpTo(
  client: DynamoDBDocumentClient,
  input: QueryCommandInput,
  wanted: number,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey = input.ExclusiveStartKey;
  do {
    const out = await client.send(
      new QueryCommand({
        ...input,
        ExclusiveStartKey: startKey,
        Limit: Math.min(Math.max(wanted, 25), 1000),
      }),
    );
    items.push(...((out.Items as Item[] | undefined) ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length < wanted);
  return items.slice(0, wanted);
}

/** Every item a query matches, page after page (for partitions known to be small: a tenant's proxies, keys…). */
export async function queryAll(client: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Item[]> {
  const items: Item[] = [];
  let startKey = input.ExclusiveStartKey;
  do {
    const out = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...((out.Items as Item[] | undefined) ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Counts the items a query matches (Select COUNT: reads keys, returns no data). */
export async function countQuery(client: DynamoDBDocumentClient, input: QueryCommandInput): Promise<number> {
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await client.send(
      new QueryCommand({ ...input, Select: "COUNT", ExclusiveStartKey: startKey }),
    );
    total += out.Count ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return total;
}

export function encodeCursor(value: string): string {
  return Buffer.from(value, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): string | undefined {
  try {
    const decoded = Buffer.from(cursor, "base64url").toString("utf8");
    return decoded.length > 0 ? decoded : undefined;
  } catch {
    return undefined;
  }
}
