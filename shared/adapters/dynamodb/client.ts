import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import { conflict } from "#shared/domain/errors.ts";
import { withEffectRecord } from "./idempotent-effects.ts";
import { isKeyCountUpdate } from "./key-counters.ts";

export interface DynamoConnection {
  region: string;
  endpoint?: string;
}

/**
 * How long a table call may take, bounded so an unreachable store answers 503 (shared/http/outage.ts) well within
 * the function's timeout rather than hanging until API Gateway gives up: attempts in all (the SDK's retries of
 * throttles and dropped connections included), and per attempt the time to connect and the longest silence
 * while waiting for an answer. 3 × (1 + 6) s plus backoff stays under the functions' 26 s (test/infra).
 */
export const TABLE_CALL_LIMITS = {
  maxAttempts: 3,
  connectionTimeoutMs: 1000,
  requestTimeoutMs: 6000,
} as const;

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
    maxAttempts: TABLE_CALL_LIMITS.maxAttempts,
    requestHandler: {
      connectionTimeout: TABLE_CALL_LIMITS.connectionTimeoutMs,
      requestTimeout: TABLE_CALL_LIMITS.requestTimeoutMs,
    },
  });
  client.middlewareStack.add(
    (next, context) => (args) =>
      context.commandName === "TransactWriteItemsCommand" ? retryingConflicts(() => next(args)) : next(args),
    { step: "initialize", name: "retryTransactionConflicts" },
  );
  // Every write transaction of an idempotent request records its effect on the request's idempotency record, in
  // the same transaction (idempotent-effects.ts): outside the retries, so each attempt carries it. The input is
  // still in document form here (lib-dynamodb marshalls just before serializing).
  client.middlewareStack.add(
    (next, context) => (args) =>
      context.commandName === "TransactWriteItemsCommand"
        ? withEffectRecord(args.input as TransactWriteCommandInput, (input) => next({ ...args, input }))
        : next(args),
    { step: "initialize", name: "recordIdempotentEffects", priority: "high" },
  );
  // A write that counts a token under a key version whose destruction (or the tenant's deletion) marked its
  // counters refuses itself (key-counters.ts): nothing is stored. Whatever adapter sent it, that is a 409 the
  // caller can retry (under the current key, or to learn the tenant is gone), never a 500. Inside the retries
  // and the idempotency record's addition, so it sees each attempt's items as sent.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "TransactWriteItemsCommand") return next(args);
      try {
        return await next(args);
      } catch (error) {
        const items = (args.input as TransactWriteCommandInput).TransactItems ?? [];
        const codes = cancellationCodes(error);
        if (codes?.some((code, i) => code === "ConditionalCheckFailed" && isKeyCountUpdate(items[i])))
          throw conflict(KEY_DESTROYED_UNDER_WRITE);
        throw error;
      }
    },
    { step: "initialize", name: "keyDestroyedUnderWrite" },
  );
  // The SDK's logger step filters every call's input and output for a logger that drops them (the default has an
  // `info` method): about 1 % of the service's CPU. Nothing here logs SDK calls, so the step is removed.
  client.middlewareStack.remove("loggerMiddleware");
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

export const KEY_DESTROYED_UNDER_WRITE =
  "A key this request sealed data under was destroyed meanwhile (or the tenant deleted); nothing was stored. Retry the request.";

/** Attempts of a write transaction cancelled only because another transaction held one of its items. */
export const TRANSACTION_CONFLICT_ATTEMPTS = 4;

/**
 * DynamoDB cancels a transaction touching an item another transaction is writing (`TransactionConflict`), and the
 * SDK does not retry it: two concurrent writes of one token, or a sweep meeting a caller's write, would be a 500.
 * Such a cancellation is retried here, for every write transaction of every adapter, after a short random wait;
 * a failed condition is never retried (it is the caller's answer).
 */
/** Runs `send`, again after a short random wait while it fails only by TransactionConflict (at most 4 times). */
export async function retryingConflicts<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const codes = cancellationCodes(error);
      const conflictOnly =
        codes?.includes("TransactionConflict") &&
        codes.every((code) => code === "None" || code === "TransactionConflict");
      if (!conflictOnly || attempt >= TRANSACTION_CONFLICT_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.random() * 40));
    }
  }
}

export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

/** For `.catch` of a conditional write whose refusal means "nothing to do": swallows that refusal, rethrows the rest. */
export function ignoreConditionFailed(error: unknown): void {
  if (!isConditionalCheckFailed(error)) throw error;
}

/** A TransactWriteItems cancelled because one of its conditions failed (not a throttle or conflict). */
export function cancelledByCondition(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return false;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((r) => r.Code === "ConditionalCheckFailed");
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
