import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { TestService } from "./service.ts";

/** Every item of the service's table, as DynamoDB Local holds it (a full Scan, all pages). */
export async function scanTable(svc: TestService): Promise<Record<string, unknown>[]> {
  const { dynamo, config } = svc.service.deps;
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({ TableName: config.tableName, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Items that name `needle` anywhere (keys or attributes), as text. */
export const itemsNaming = (items: Record<string, unknown>[], needle: string) =>
  items.filter((item) => JSON.stringify(item).includes(needle));
