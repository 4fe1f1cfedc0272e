import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredTransaction, TransactionStore } from "#shared/ports/stores.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { isConditionalCheckFailed } from "./client.ts";
import { queryAll } from "./paging.ts";
import { epochSeconds } from "./schema.ts";
import { sweepEntryPut } from "./sweep-index.ts";
import { tokenKeys } from "./token-keys.ts";
import type { DynamoTokenStore } from "./token-store.ts";
import { transactionKeys } from "./transaction-keys.ts";

interface Operation {
  operation: "create" | "update" | "delete";
  token_id: string;
  token_type: string;
  fingerprint: string;
  /** An update's fingerprint before it, when the update changes it. */
  previous_fingerprint?: string;
  next?: Record<string, unknown>;
}

const UNLOCK = "REMOVE txn_id, txn_op, txn_expires_epoch";

export class DynamoTransactionStore implements TransactionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
    private readonly tokens: DynamoTokenStore,
  ) {}

  async create(transaction: StoredTransaction, audit: LogEntry): Promise<void> {
    const expiresEpoch = epochSeconds(new Date(transaction.expires_at));
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...transactionKeys.record(transaction.tenant_id, transaction.id),
                entity: "transaction",
                ...transaction,
                expires_epoch: expiresEpoch,
                ttl: expiresEpoch + 7 * 86_400,
              },
              ConditionExpression: "attribute_not_exists(PK)",
            },
          },
          // The sweep rolls the transaction back when it expires.
          sweepEntryPut(this.tableName, {
            kind: "X",
            tenantId: transaction.tenant_id,
            entityId: transaction.id,
            dueAt: transaction.expires_at,
          }),
          this.audit.put(audit),
        ],
      }),
    );
  }

  async get(tenantId: string, id: string): Promise<StoredTransaction | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: transactionKeys.record(tenantId, id),
        ConsistentRead: true,
      }),
    );
    if (!out.Item) return undefined;
    return stripKeys<StoredTransaction>(out.Item, ["expires_epoch", "op_count"]);
  }

  private async operations(tenantId: string, id: string): Promise<Operation[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :op)",
      ExpressionAttributeValues: { ":pk": transactionKeys.record(tenantId, id).PK, ":op": "OP#" },
      ConsistentRead: true,
    });
    return items as unknown as Operation[];
  }

  private heldBy(id: string) {
    return { ConditionExpression: "txn_id = :txn", ExpressionAttributeValues: { ":txn": id } };
  }

  async commit(transaction: StoredTransaction, now: Date, audit: LogEntry): Promise<boolean> {
    const { tenant_id: tenantId, id } = transaction;
    const operations = await this.operations(tenantId, id);
    const writes = operations.map((op) => {
      const Key = tokenKeys.token(tenantId, op.token_id);
      if (op.operation === "create")
        return { Update: { TableName: this.tableName, Key, UpdateExpression: UNLOCK, ...this.heldBy(id) } };
      if (op.operation === "update")
        return {
          Put: { TableName: this.tableName, Item: op.next as Record<string, unknown>, ...this.heldBy(id) },
        };
      return { Delete: { TableName: this.tableName, Key, ...this.heldBy(id) } };
    });
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            ...writes,
            {
              Update: {
                TableName: this.tableName,
                Key: transactionKeys.record(tenantId, id),
                UpdateExpression: "SET #state = :committed",
                ConditionExpression: "#state = :open AND expires_epoch > :now",
                ExpressionAttributeNames: { "#state": "state" },
                ExpressionAttributeValues: {
                  ":committed": "committed",
                  ":open": "open",
                  ":now": epochSeconds(now),
                },
              },
            },
            this.audit.put(audit),
          ],
        }),
      );
    } catch (error) {
      if (error instanceof Error && error.name === "TransactionCanceledException") return false;
      throw error;
    }
    for (const op of operations.filter((o) => o.operation === "delete"))
      await this.tokens.releaseFingerprint(tenantId, op.token_type, op.fingerprint, op.token_id);
    // An update that changed the fingerprint moves its claim (best effort: a claim left behind is stale, and a
    // deduplicating create never honours a stale claim).
    for (const op of operations)
      if (op.operation === "update" && op.previous_fingerprint !== undefined)
        await this.tokens.moveClaim(
          tenantId,
          op.token_type,
          op.previous_fingerprint,
          op.fingerprint,
          op.token_id,
        );
    return true;
  }

  async rollback(
    transaction: StoredTransaction,
    audit: LogEntry,
    options: { expired: boolean } = { expired: false },
  ): Promise<boolean> {
    const { tenant_id: tenantId, id } = transaction;
    const operations = await this.operations(tenantId, id);
    const undo = operations.map((op) => {
      const target = {
        TableName: this.tableName,
        Key: tokenKeys.token(tenantId, op.token_id),
        ...this.heldBy(id),
      };
      return op.operation === "create"
        ? ({ kind: "delete", input: target } as const)
        : ({ kind: "unlock", input: { ...target, UpdateExpression: UNLOCK } } as const);
    });
    const close = {
      TableName: this.tableName,
      Key: transactionKeys.record(tenantId, id),
      UpdateExpression: "SET #state = :rolledBack",
      ConditionExpression: "#state = :open",
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: { ":rolledBack": "rolled_back", ":open": "open" },
    };
    if (options.expired) {
      // After expiry other writers may already have taken over tokens it held: undo each one still its own.
      try {
        await this.client.send(new UpdateCommand(close));
      } catch (error) {
        if (isConditionalCheckFailed(error)) return false;
        throw error;
      }
      for (const step of undo) {
        const command =
          step.kind === "delete" ? new DeleteCommand(step.input) : new UpdateCommand(step.input);
        await this.client.send(command).catch((error: unknown) => {
          if (!isConditionalCheckFailed(error)) throw error;
        });
      }
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: this.audit.item(audit) }));
    } else {
      const items = undo.map((step) =>
        step.kind === "delete" ? { Delete: step.input } : { Update: step.input },
      );
      try {
        await this.client.send(
          new TransactWriteCommand({ TransactItems: [...items, { Update: close }, this.audit.put(audit)] }),
        );
      } catch (error) {
        if (error instanceof Error && error.name === "TransactionCanceledException") return false;
        throw error;
      }
    }
    for (const op of operations.filter((o) => o.operation === "create"))
      await this.tokens.releaseFingerprint(tenantId, op.token_type, op.fingerprint, op.token_id);
    return true;
  }
}
