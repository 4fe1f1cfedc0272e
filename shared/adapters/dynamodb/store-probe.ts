import { type DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { isStoreOutage } from "#shared/http/outage.ts";
import type { StoreProbe } from "#shared/ports/store-health.ts";

/** A health check waits this long for the store at most: a probe must answer faster than the prober gives up. */
export const PROBE_TIMEOUT_MS = 1000;

/**
 * Reads one item that never exists. Any answer from DynamoDB counts as reachable, a refusal too (the system
 * function may read no item of the table in AWS: AccessDenied is still DynamoDB answering); a connection
 * failure, a timeout or a throttle does not, nor a missing table (nothing would work).
 */
export class DynamoStoreProbe implements StoreProbe {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly timeoutMs = PROBE_TIMEOUT_MS,
  ) {}

  async reachable(): Promise<boolean> {
    try {
      await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { PK: "SYSTEM#HEALTH", SK: "PROBE" } }),
        { abortSignal: AbortSignal.timeout(this.timeoutMs) },
      );
      return true;
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      return !(isStoreOutage(error) || name === "AbortError" || name === "ResourceNotFoundException");
    }
  }
}
