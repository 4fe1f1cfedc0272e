import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DeleteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { BudgetLease, RequestBudget } from "#shared/ports/request-budget.ts";
import { isConditionalCheckFailed } from "./client.ts";
import { epochSeconds } from "./schema.ts";

/** Partition keys of rate-limit counters: read-only functions may update these items and no others (IAM). */
export const RATE_KEY_PREFIX = "RATE#";

/** RATE#<bucket>  WINDOW#<n>: one rate-limit window's counter (`used`), deleted by TTL after the window. */
export const rateWindowKey = (bucket: string, window: number) => ({
  PK: `${RATE_KEY_PREFIX}${bucket}`,
  SK: `WINDOW#${window}`,
});

/** A lease that meets a nearly spent window asks again for what is left, at most this many times. */
const ATTEMPTS = 4;

export interface DynamoRequestBudgetOptions {
  /**
   * Delete a bucket's previous counter when this process leases in a newer window. For DynamoDB Local,
   * which has no TTL, and one process; in AWS the table's TTL removes counters.
   */
  deleteSpentWindows?: boolean;
}

/**
 * Rate-limit counters in the table: a lease is one UpdateItem that ADDs the block to the window's counter
 * under the condition that the sum stays within the capacity (atomic across every process).
 */
/** Buckets whose last window is remembered (to delete it when the next begins): one per distinct caller. */
const LAST_WINDOWS_KEPT = 10_000;

export class DynamoRequestBudget implements RequestBudget {
  private readonly lastWindow = new Map<string, number>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: DynamoRequestBudgetOptions = {},
  ) {}

  async lease({ bucket, window, wanted, capacity, expiresAt }: BudgetLease): Promise<number> {
    this.forgetPrevious(bucket, window);
    let asked = Math.min(wanted, capacity);
    for (let attempt = 0; attempt < ATTEMPTS && asked > 0; attempt++) {
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: rateWindowKey(bucket, window),
            UpdateExpression: "ADD #used :asked SET #entity = :entity, #ttl = :ttl",
            ConditionExpression: "attribute_not_exists(#used) OR #used <= :most",
            ExpressionAttributeNames: { "#used": "used", "#entity": "entity", "#ttl": "ttl" },
            ExpressionAttributeValues: {
              ":asked": asked,
              ":most": capacity - asked,
              ":entity": "rate_window",
              ":ttl": epochSeconds(expiresAt),
            },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return asked;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // What is left, when the store says what it holds; otherwise half of what was asked.
        const used = usedOf(error);
        asked = used === undefined ? Math.floor(asked / 2) : Math.min(asked - 1, capacity - used);
      }
    }
    return 0;
  }

  private forgetPrevious(bucket: string, window: number): void {
    if (!this.options.deleteSpentWindows) return;
    const previous = this.lastWindow.get(bucket);
    // Most recent last (Map order); past the cap the least recent go, their old counters left behind.
    this.lastWindow.delete(bucket);
    this.lastWindow.set(bucket, window);
    if (this.lastWindow.size > LAST_WINDOWS_KEPT) {
      const [oldest] = this.lastWindow.keys();
      if (oldest !== undefined) this.lastWindow.delete(oldest);
    }
    if (previous === undefined || previous >= window) return;
    // Best effort: a counter left behind holds no data and only takes room.
    this.client
      .send(new DeleteCommand({ TableName: this.tableName, Key: rateWindowKey(bucket, previous) }))
      .catch(() => undefined);
  }
}

/** The counter a failed condition saw (ALL_OLD; the document client leaves it in wire form: `{ N: "3" }`). */
function usedOf(error: unknown): number | undefined {
  const used = (error as { Item?: { used?: unknown } }).Item?.used;
  const value = typeof used === "object" && used !== null && "N" in used ? Number(used.N) : used;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
