import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";

export interface DynamoConnection {
  region: string;
  endpoint?: string;
}

/** One document client per connection; local endpoints get dummy credentials (DynamoDB Local ignores them). */
export function createDocumentClient(connection: DynamoConnection): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: connection.region,
    ...(connection.endpoint
      ? {
          endpoint: connection.endpoint,
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
        }
      : {}),
    maxAttempts: 3,
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

/** A TransactWriteItems cancelled because one of its conditions failed (not a throttle or conflict). */
export function cancelledByCondition(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return false;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((r) => r.Code === "ConditionalCheckFailed");
}

/** The per-item codes of a transaction cancelled by DynamoDB ("None" as undefined), or undefined for other errors. */
export function cancellationCodes(error: unknown): (string | undefined)[] | undefined {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return undefined;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return reasons?.map((r) => (r.Code === "None" ? undefined : r.Code));
}

/** Runs a write transaction; false when one of its conditions failed (the caller knows which means what). */
export async function transactOrFalse(
  client: DynamoDBDocumentClient,
  items: NonNullable<TransactWriteCommandInput["TransactItems"]>,
): Promise<boolean> {
  try {
    await client.send(new TransactWriteCommand({ TransactItems: items }));
    return true;
  } catch (error) {
    if (cancelledByCondition(error)) return false;
    throw error;
  }
}
