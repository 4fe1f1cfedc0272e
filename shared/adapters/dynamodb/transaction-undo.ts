import { PutCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredTransaction } from "#shared/ports/stores.ts";
import { cancelledByCondition, isConditionalCheckFailed } from "./client.ts";
import { OWN_TRANSACT_ITEMS } from "./limits.ts";
import { tokenKeys } from "./token-keys.ts";
import {
  closeAgainWhileJoined,
  inGroups,
  type Operation,
  SAME_OPERATIONS,
  TransactionItems,
  UNLOCK,
} from "./transaction-items.ts";
import { transactionKeys } from "./transaction-keys.ts";

/** A transaction's rollback (asked for, or the sweep's at its expiry) and the undoing of orphaned operations. */
export abstract class TransactionUndo extends TransactionItems {
  async rollback(
    transaction: StoredTransaction,
    audit: LogEntry,
    options: { expired: boolean } = { expired: false },
  ): Promise<boolean> {
    return closeAgainWhileJoined(() => this.rollbackOnce(transaction, audit, options));
  }

  private async rollbackOnce(
    transaction: StoredTransaction,
    audit: LogEntry,
    options: { expired: boolean },
  ): Promise<boolean | "joined meanwhile"> {
    const { tenant_id: tenantId, id } = transaction;
    const operations = await this.operations(tenantId, id);
    const close = (staged: boolean) => ({
      TableName: this.tableName,
      Key: transactionKeys.record(tenantId, id),
      UpdateExpression: staged ? "SET #state = :rolledBack, rolling_back = :yes" : "SET #state = :rolledBack",
      ConditionExpression: `#state = :open AND ${SAME_OPERATIONS}`,
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: {
        ":rolledBack": "rolled_back",
        ":open": "open",
        ":ops": operations.length,
        ":zeroOps": 0,
        ...(staged ? { ":yes": true } : {}),
      },
    });
    // After expiry other writers may already have taken over tokens it held: undo each one still its own. So too
    // when the undo does not fit one write (a batch tokenize): closed first (with `rolling_back`, so the sweep
    // finishes a request that dies meanwhile), nothing it held can commit after.
    const counters = this.counters(tenantId, operations, "rollback");
    if (options.expired || operations.length + counters.length + 2 > OWN_TRANSACT_ITEMS) {
      try {
        await this.client.send(new UpdateCommand(close(true)));
      } catch (error) {
        if (isConditionalCheckFailed(error))
          return (await this.joinedSince(tenantId, id, operations.length)) ? "joined meanwhile" : false;
        throw error;
      }
      await this.undoEach(tenantId, id, operations, audit);
    } else {
      const undo = operations.map((op) => this.undoWrite(tenantId, id, op));
      try {
        await this.client.send(
          new TransactWriteCommand({
            TransactItems: [...undo, ...counters, { Update: close(false) }, this.audit.put(audit)],
          }),
        );
      } catch (error) {
        // As the commit's: only a refused condition means closed (or joined); a throttle leaves it open (503).
        if (cancelledByCondition(error))
          return (await this.joinedSince(tenantId, id, operations.length)) ? "joined meanwhile" : false;
        throw error;
      }
    }
    await this.afterRollback(tenantId, id, operations);
    return true;
  }

  /** Finishes a staged rollback a request left unfinished (the sweep, at the transaction's expiry). */
  async finishRollback(transaction: StoredTransaction, audit: LogEntry): Promise<void> {
    const operations = await this.operations(transaction.tenant_id, transaction.id);
    await this.undoEach(transaction.tenant_id, transaction.id, operations, audit);
    await this.afterRollback(transaction.tenant_id, transaction.id, operations);
  }

  /**
   * The operation items of a transaction whose record is gone (DynamoDB's TTL removes it and them in any order).
   * Nothing says whether it committed: a one-write commit whose request died before forgetting its items leaves
   * them as an open transaction's would. So an operation is undone, its reservation given back and its claim
   * released, only in the write that finds its token still held by it; one already applied (its token unlocked
   * or deleted by the commit) only loses its op item: a committed token's count and claim stand (they were given
   * back a second time: the key version destroyable under a live token, its value deduplicated no more). A token
   * taken over since the expiry keeps its reservation (over-counted: the safe side). Audited on its own: there is
   * no record to write the entry with.
   */
  async undoOrphan(tenantId: string, id: string, audit: LogEntry): Promise<void> {
    const operations = await this.operations(tenantId, id);
    if (operations.length === 0) return;
    const undone: Operation[] = [];
    await inGroups(operations, async (op) => {
      if (await this.undoOne(tenantId, id, op, "forget")) undone.push(op);
    });
    // Audited only for what this run undid: a committed transaction's items (only forgotten) are no rollback, and
    // two runs at once (two sweeps, a T and an X entry) each record the operations they undid, never one twice.
    if (undone.length > 0) {
      const entry = {
        ...audit,
        message: `${audit.message} (${undone.length} of ${operations.length} undone)`,
      };
      await this.client.send(new PutCommand(this.audit.put(entry).Put));
    }
    for (const op of undone.filter((o) => o.operation === "create"))
      await this.tokens.releaseFingerprint(tenantId, op.token_type, op.fingerprint, op.token_id);
  }

  /**
   * Undoes one operation in one write with its op item's removal and its reservation, while the transaction still
   * holds the token: true when it did. Apart (the undo, then the item), an undoOrphan meeting the item in between saw
   * the token released and only forgot it, and the reservation was never given back (review round 25). When the
   * token is no longer held (taken over, or applied by a commit), the item goes, with its reservation for a known
   * rollback ("give back") or alone for an orphan that may have committed ("forget").
   */
  private async undoOne(
    tenantId: string,
    id: string,
    op: Operation,
    notHeld: "give back" | "forget",
  ): Promise<boolean> {
    const forget = this.forgetWrite(tenantId, id, op);
    const counters = this.counters(tenantId, [op], "rollback");
    // While the token is held, nothing has settled its reservation yet (every write that settles one releases
    // the hold in the same write, or finds it released), so the hold alone guards the count: the op item goes
    // with it unconditionally. An item already gone (DynamoDB's TTL, which counts nothing) used to release the
    // hold alone and keep the reservation counted for good (review round 26).
    const held = [this.undoWrite(tenantId, id, op), this.forgetWrite(tenantId, id, op, true), ...counters];
    if (await this.sendIgnoringApplied(held)) return true;
    await this.sendIgnoringApplied(notHeld === "give back" ? [forget, ...counters] : [forget]);
    return false;
  }

  /** Undoes one operation, if the transaction still holds its token: a pending create goes, a hold is released. */
  private undoWrite(tenantId: string, id: string, op: Operation) {
    const target = {
      TableName: this.tableName,
      Key: tokenKeys.token(tenantId, op.token_id),
      ...this.heldBy(id),
    };
    return op.operation === "create"
      ? { Delete: target }
      : { Update: { ...target, UpdateExpression: UNLOCK } };
  }

  /**
   * A staged rollback's writes, each safe to run again: every undo applies only while the transaction still holds
   * its token, and the reservation its staging counted goes exactly once whatever became of the token (deleted or
   * taken over since the expiry), with the op item. Then the record's `rolling_back` goes, with the audit entry
   * (in one write: the rollback is recorded exactly when it is finished).
   */
  private async undoEach(
    tenantId: string,
    id: string,
    operations: Operation[],
    audit: LogEntry,
  ): Promise<void> {
    await inGroups(operations, async (op) => {
      await this.undoOne(tenantId, id, op, "give back");
    });
    const finished = {
      TableName: this.tableName,
      Key: transactionKeys.record(tenantId, id),
      UpdateExpression: "REMOVE rolling_back",
      ConditionExpression: "rolling_back = :yes",
      ExpressionAttributeValues: { ":yes": true },
    };
    // Finished already (a request and the sweep both finishing it): recorded once.
    await this.sendIgnoringApplied([{ Update: finished }, this.audit.put(audit)]);
  }

  private async afterRollback(tenantId: string, id: string, operations: Operation[]): Promise<void> {
    for (const op of operations.filter((o) => o.operation === "create"))
      await this.tokens.releaseFingerprint(tenantId, op.token_type, op.fingerprint, op.token_id);
    await this.forgetOperations(tenantId, id, operations);
  }
}
