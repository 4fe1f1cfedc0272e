import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DeleteCommand, GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import { commitDelta, rollbackDelta, sumDeltas } from "#shared/domain/keys/key-refs.ts";
import type { AuditItems } from "./audit-items.ts";
import { keyCountUpdates } from "./key-counters.ts";
import { utf8Bytes } from "./limits.ts";
import { queryAll } from "./paging.ts";
import type { DynamoTokenStore } from "./token-store.ts";
import { transactionKeys } from "./transaction-keys.ts";

/** A transaction's operation as its op item holds it (transaction-store.ts stages them). */
export interface Operation {
  operation: "create" | "update" | "delete";
  token_id: string;
  token_type: string;
  fingerprint: string;
  /** An update's fingerprint before it, when the update changes it. */
  previous_fingerprint?: string;
  next?: Record<string, unknown>;
  /** The keys the token needed before and needs after (key-refs.ts); absent on operations older than counting. */
  key_refs_before?: string[];
  key_refs_after?: string[];
}

export const bytesOf = (operations: Operation[]) => operations.reduce((sum, op) => sum + utf8Bytes(op), 0);

export const UNLOCK = "REMOVE txn_id, txn_op, txn_expires_epoch, txn_batch";

/** Single writes sent at once when a rollback or roll-forward goes item by item. */
const WRITES_IN_FLIGHT = 10;

export async function inGroups<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += WRITES_IN_FLIGHT)
    await Promise.all(items.slice(i, i + WRITES_IN_FLIGHT).map(run));
}

/**
 * A close (commit or rollback) applies exactly the operations it read: one joining between that read and the close
 * would be answered as staged yet never applied (its token locked until the expiry, its key count kept for good).
 * The record counts its operations (`op_count`); a close that meets another count reads them again.
 */
export const SAME_OPERATIONS = "(op_count = :ops OR (attribute_not_exists(op_count) AND :ops = :zeroOps))";
const CLOSE_ATTEMPTS = 4;

/** Runs a close again (reading the operations again) while writes joined since its read; false after the last. */
export async function closeAgainWhileJoined<T>(
  close: () => Promise<T | "joined meanwhile">,
): Promise<T | false> {
  for (let attempt = 0; attempt < CLOSE_ATTEMPTS; attempt++) {
    const outcome = await close();
    if (outcome !== "joined meanwhile") return outcome;
  }
  return false;
}

/** The tokens a transaction's operations create. */
export const createdBy = (operations: Operation[]): number =>
  operations.filter((op) => op.operation === "create").length;

/**
 * What commit and rollback share of a transaction's items in the table: its operations, the holds and op items
 * their writes condition on or remove, and the key counters they move (DynamoTransactionStore, TransactionUndo).
 */
export abstract class TransactionItems {
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
    protected readonly audit: AuditItems,
    protected readonly tokens: DynamoTokenStore,
  ) {}

  protected async operations(tenantId: string, id: string): Promise<Operation[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :op)",
      ExpressionAttributeValues: { ":pk": transactionKeys.record(tenantId, id).PK, ":op": "OP#" },
      ConsistentRead: true,
    });
    return items as unknown as Operation[];
  }

  protected heldBy(id: string) {
    return { ConditionExpression: "txn_id = :txn", ExpressionAttributeValues: { ":txn": id } };
  }

  async forgetOperations(tenantId: string, id: string, known?: Operation[]): Promise<void> {
    // Commit and rollback have just read them; only the sweep, cleaning after a request that died, looks them up.
    const tokenIds = known
      ? known.map((op) => op.token_id)
      : (
          await queryAll(this.client, {
            TableName: this.tableName,
            KeyConditionExpression: "PK = :pk AND begins_with(SK, :op)",
            ExpressionAttributeValues: { ":pk": transactionKeys.record(tenantId, id).PK, ":op": "OP#" },
            ProjectionExpression: "token_id",
          })
        ).map((item) => String(item.token_id));
    await inGroups(tokenIds, async (tokenId) => {
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: transactionKeys.operation(tenantId, id, tokenId),
        }),
      );
    });
  }

  /** The key counter updates of applying (commit) or discarding (rollback) these operations, in one write. */
  protected counters(tenantId: string, ops: Operation[], phase: "commit" | "rollback") {
    const delta = sumDeltas(
      ops.map((op) =>
        (phase === "commit" ? commitDelta : rollbackDelta)(op.key_refs_before ?? [], op.key_refs_after ?? []),
      ),
    );
    return keyCountUpdates(this.tableName, tenantId, delta, ops[0]?.token_id ?? tenantId);
  }

  /** Whether an operation joined the still open transaction since `read` of them were read (its close refused). */
  protected async joinedSince(tenantId: string, id: string, read: number): Promise<boolean> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: transactionKeys.record(tenantId, id),
        ConsistentRead: true,
      }),
    );
    return out.Item?.state === "open" && Number(out.Item.op_count ?? 0) !== read;
  }

  /** One operation's write with its counter updates; false when its first item's condition refused it. */
  protected async sendIgnoringApplied(items: Record<string, unknown>[]): Promise<boolean> {
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: items as never }));
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] !== "ConditionalCheckFailed") throw error;
      return false;
    }
  }

  /**
   * The op item's removal, once: what is counted with it is counted exactly once. Beside a write that requires the
   * token still held (`whileHeld`), unconditional: the hold alone guards the count, and an item DynamoDB's TTL
   * removed (which counts nothing) must not refuse it.
   */
  protected forgetWrite(tenantId: string, id: string, op: Operation, whileHeld = false) {
    const Key = transactionKeys.operation(tenantId, id, op.token_id);
    if (whileHeld) return { Delete: { TableName: this.tableName, Key } };
    return { Delete: { TableName: this.tableName, Key, ConditionExpression: "attribute_exists(PK)" } };
  }
}
