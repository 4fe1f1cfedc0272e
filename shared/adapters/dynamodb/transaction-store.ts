import { GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import { outsideAnyRequest } from "#shared/domain/idempotency-scope.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";
import type { StoredTransaction, TransactionOperationRef, TransactionStore } from "#shared/ports/stores.ts";
import { stripKeys } from "./audit-items.ts";
import { cancelledByCondition, ignoreConditionFailed } from "./client.ts";
import { OWN_TRANSACT_ITEMS, PACK_BYTES } from "./limits.ts";
import { epochSeconds } from "./schema.ts";
import { sweepEntryPut } from "./sweep-index.ts";
import { batchGetTokenItems } from "./token-batch-get.ts";
import { tokenFromItem } from "./token-items.ts";
import { tokenKeys } from "./token-keys.ts";
import {
  bytesOf,
  closeAgainWhileJoined,
  createdBy,
  inGroups,
  type Operation,
  SAME_OPERATIONS,
  UNLOCK,
} from "./transaction-items.ts";
import { RECORD_TTL_SECONDS, transactionKeys } from "./transaction-keys.ts";
import { TransactionUndo } from "./transaction-undo.ts";

/** A staged cvc with less than this left of its hour is not written back by a commit (applyWrite). */
export const CVC_WRITE_MARGIN_MS = 60_000;

/** Fields evaluated on the stored data: changing one takes reveal-level token:update (manage.ts). */
const EVALUATED_FIELDS = ["mask", "fingerprint_expression", "search_indexes"] as const;

/** A value as JSON with object keys sorted (a map read back from the table may list its keys in another order). */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/**
 * Transactions in the table: the record, its op items (one per token it holds), the holds on the tokens and the
 * key counters; commits here, rollbacks in TransactionUndo, what both share in TransactionItems.
 */
export class DynamoTransactionStore extends TransactionUndo implements TransactionStore {
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
                ttl: expiresEpoch + RECORD_TTL_SECONDS,
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

  async operationRefs(tenantId: string, id: string): Promise<TransactionOperationRef[]> {
    return this.refsOf(tenantId, await this.operations(tenantId, id));
  }

  /**
   * `operations` as access rules judge them, their tokens read as stored now (every one is held, or pending, by
   * the open transaction). A token the read left unread (throttled) fails the whole: skipped, as a gone one is,
   * its operation escaped the commit's check (round-3 review).
   */
  private async refsOf(tenantId: string, operations: Operation[]): Promise<TransactionOperationRef[]> {
    if (operations.length === 0) return [];
    const { items } = await batchGetTokenItems(
      this.client,
      this.tableName,
      tenantId,
      operations.map((op) => op.token_id),
      { consistent: true, what: "The tokens of a transaction" },
    );
    const tokens = new Map(items.map(tokenFromItem).map((t) => [t.id, t]));
    return operations.flatMap((op): TransactionOperationRef[] => {
      const token = tokens.get(op.token_id);
      // Gone: nothing of it can be applied (the commit's write requires the token still held).
      if (!token) return [];
      const ref = { id: token.id, container: token.container };
      if (op.operation !== "update") return [{ operation: op.operation, token: ref }];
      const staged = (op.next ?? {}) as Record<string, unknown>;
      const container = typeof staged.container === "string" ? staged.container : token.container;
      const stored = token as unknown as Record<string, unknown>;
      // As manage.ts revealChanges: a move, or a field evaluated on the stored data, takes reveal.
      const reveal =
        container !== token.container ||
        EVALUATED_FIELDS.some((field) => canonical(staged[field]) !== canonical(stored[field]));
      return [{ operation: "update", token: ref, next: { id: token.id, container }, reveal }];
    });
  }

  /**
   * The write that applies one operation, if the transaction still holds its token. An update puts the token as
   * staged, less a cvc with less than CVC_WRITE_MARGIN_MS of its hour left at `now`: the sweep may have removed
   * it from the token meanwhile (and forgotten it), so the staged copy must not bring it back; the margin covers
   * a commit that read its clock just before the end and wrote after it (a write outlasts no function timeout).
   */
  private applyWrite(tenantId: string, id: string, op: Operation, now: Date): Record<string, unknown> {
    const Key = tokenKeys.token(tenantId, op.token_id);
    if (op.operation === "create")
      return { Update: { TableName: this.tableName, Key, UpdateExpression: UNLOCK, ...this.heldBy(id) } };
    if (op.operation === "update") {
      const { sealed_cvc, cvc_expires_at, ...rest } = op.next as Record<string, unknown>;
      const cvcLeft = typeof cvc_expires_at === "string" ? Date.parse(cvc_expires_at) - now.getTime() : 0;
      const cvcLive = cvcLeft > CVC_WRITE_MARGIN_MS;
      const Item = cvcLive ? { ...rest, sealed_cvc, cvc_expires_at } : rest;
      return { Put: { TableName: this.tableName, Item, ...this.heldBy(id) } };
    }
    return { Delete: { TableName: this.tableName, Key, ...this.heldBy(id) } };
  }

  async settleCommitted(tenantId: string, id: string): Promise<void> {
    // Each step is safe to run again (claims move or go only while they name the token): the request may have made
    // some of them. Items forgotten were settled before (afterApply runs before forgetOperations).
    const operations = await this.operations(tenantId, id);
    await this.afterApply(tenantId, operations);
    await this.forgetOperations(tenantId, id, operations);
  }

  private closeWrite(tenantId: string, id: string, now: Date, staged: boolean, read: number) {
    return {
      Update: {
        TableName: this.tableName,
        Key: transactionKeys.record(tenantId, id),
        UpdateExpression: staged
          ? "SET #state = :committed, rolling_forward = :yes"
          : "SET #state = :committed",
        // A batch past its answer-by commits nothing: its pending creates' claims may have been taken over.
        ConditionExpression: `#state = :open AND expires_epoch > :now AND ${SAME_OPERATIONS} AND (attribute_not_exists(answer_by) OR answer_by > :now)`,
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: {
          ":committed": "committed",
          ":open": "open",
          ":now": epochSeconds(now),
          ":ops": read,
          ":zeroOps": 0,
          ...(staged ? { ":yes": true } : {}),
        },
      },
    };
  }

  /**
   * Commits: when every operation fits with the record and the audit entry in one TransactWriteItems, in that one
   * write (as user transactions, capped at MAX_TRANSACTION_OPERATIONS, always do). Beyond (a batch tokenize), a
   * staged commit: the commit point is the record's flip to committed (with `rolling_forward`), one conditional
   * write that a rollback can no longer undo; the operations are then applied in as many writes as they need
   * (rollForward), and a request that dies before the end is finished by the sweep at the transaction's expiry.
   */
  async commit(
    transaction: StoredTransaction,
    now: Date,
    audit: LogEntry,
    allowed?: (operations: TransactionOperationRef[]) => boolean,
    onCreated: (created: number) => void = () => {},
  ): Promise<{ created: number } | false | "refused"> {
    return closeAgainWhileJoined(() => this.commitOnce(transaction, now, audit, allowed, onCreated));
  }

  private async commitOnce(
    transaction: StoredTransaction,
    now: Date,
    audit: LogEntry,
    allowed: ((operations: TransactionOperationRef[]) => boolean) | undefined,
    onCreated: (created: number) => void,
  ): Promise<{ created: number } | false | "refused" | "joined meanwhile"> {
    const { tenant_id: tenantId, id } = transaction;
    const operations = await this.operations(tenantId, id);
    // Judged on exactly what this write applies: one joining after this read fails the write (SAME_OPERATIONS) and
    // is judged on the next read. Judged before (a read of its own), a write joining in between landed unchecked.
    if (allowed && !allowed(await this.refsOf(tenantId, operations))) return "refused";
    const counters = this.counters(tenantId, operations, "commit");
    const staged =
      operations.length + counters.length + 2 > OWN_TRANSACT_ITEMS || bytesOf(operations) > PACK_BYTES;
    const writes = staged ? [] : operations.map((op) => this.applyWrite(tenantId, id, op, now));
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            ...writes,
            ...(staged ? [] : counters),
            this.closeWrite(tenantId, id, now, staged, operations.length),
            this.audit.put(audit),
          ] as never,
        }),
      );
    } catch (error) {
      // Refused by a condition: closed, expired, or joined since the read. Any other cancellation (throttled, or
      // conflicts past the client's retries) leaves the transaction open: an outage the caller retries (503), never
      // the 404 of a finished one.
      if (cancelledByCondition(error))
        return (await this.joinedSince(tenantId, id, operations.length)) ? "joined meanwhile" : false;
      throw error;
    }
    // The commit was the request's effect (recorded with it); applying it is its continuation, which the sweep
    // finishes too: outside the request's claim, so its writes do not each update the idempotency record (up to
    // 10 at once in the one-by-one fallback: conflicting transactions on one item in DynamoDB) nor fail on a lapsed
    // claim with the commit already made.
    // Staged: counted by what this roll-forward applied itself (a write meeting one of its holds may finish it
    // meanwhile, finishCommittedHold, and counts what it applied).
    let created: number;
    if (staged)
      created = await outsideAnyRequest(() => this.rollForward(tenantId, id, operations, now, onCreated));
    else {
      created = createdBy(operations);
      if (created > 0) onCreated(created);
    }
    await this.afterApply(tenantId, operations);
    await this.forgetOperations(tenantId, id, operations);
    return { created };
  }

  /** Finishes a staged commit a request left unfinished (the sweep, at the transaction's expiry). */
  async finishCommit(
    transaction: StoredTransaction,
    now: Date,
    onCreated: (created: number) => void = () => {},
  ): Promise<{ created: number }> {
    const operations = await this.operations(transaction.tenant_id, transaction.id);
    // Only what this call applied: the sweep, writes meeting the holds (finishCommittedHold) and the commit's own
    // request may finish the same transaction at once, each having read every operation (review r2b: each
    // counted all its creations, TokensCreated counted once per finisher).
    const created = await this.rollForward(transaction.tenant_id, transaction.id, operations, now, onCreated);
    await this.afterApply(transaction.tenant_id, operations);
    await this.forgetOperations(transaction.tenant_id, transaction.id, operations);
    return { created };
  }

  /**
   * Applies a committed transaction's operations, chunk by chunk; each write is conditioned on the transaction
   * still holding the token, so running it again (a retry, the sweep) changes nothing already applied. Then the
   * record's `rolling_forward` goes.
   */
  private async rollForward(
    tenantId: string,
    id: string,
    operations: Operation[],
    now: Date,
    onCreated: (created: number) => void,
  ): Promise<number> {
    let created = 0;
    // Told as each write lands: a later chunk failing (throttled past the SDK's retries) or the process dying
    // must not leave this run's earlier creations uncounted, no later finisher applies (nor counts) them again.
    const applied = (n: number) => {
      created += n;
      if (n > 0) onCreated(n);
    };
    for (const chunk of this.chunks(tenantId, operations)) {
      try {
        await this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              ...chunk.map((op) => this.applyWrite(tenantId, id, op, now)),
              ...chunk.map((op) => this.forgetWrite(tenantId, id, op)),
              ...this.counters(tenantId, chunk, "commit"),
            ] as never,
          }),
        );
        applied(createdBy(chunk));
      } catch (error) {
        if (!(error instanceof Error && error.name === "TransactionCanceledException")) throw error;
        // One by one: an operation applied by an earlier attempt has no op item left (skipped whole); one whose
        // token was written by another after the locks lapsed is not applied, and the reservation its staging
        // counted goes back with its op item instead (it used to stay, the key version never destroyable).
        await inGroups(chunk, async (op) => {
          // While held, the hold alone guards the count (review round 26: an op item TTL had removed made this
          // write fail at every try, the committed version never applied).
          const counted = [
            this.forgetWrite(tenantId, id, op, true),
            ...this.counters(tenantId, [op], "commit"),
          ];
          if (await this.sendIgnoringApplied([this.applyWrite(tenantId, id, op, now), ...counted])) {
            if (op.operation === "create") applied(1);
            return;
          }
          await this.sendIgnoringApplied([
            this.forgetWrite(tenantId, id, op),
            ...this.counters(tenantId, [op], "rollback"),
          ]);
        });
      }
    }
    // Conditioned: a record TTL removed meanwhile is not recreated as a bare item.
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: transactionKeys.record(tenantId, id),
          UpdateExpression: "REMOVE rolling_forward",
          ConditionExpression: "attribute_exists(PK)",
        }),
      )
      .catch(ignoreConditionFailed);
    return created;
  }

  /**
   * Operations in runs whose writes (the token's and the op item's removal, each) and key counters fit one
   * TransactWriteItems: at most OWN_TRANSACT_ITEMS items and PACK_BYTES (a tenant a year old has a dozen key
   * sets: a fixed room for counters overflowed, and the commit failed past its commit point at every retry).
   */
  private chunks(tenantId: string, operations: Operation[]): Operation[][] {
    const runs: Operation[][] = [];
    let run: Operation[] = [];
    for (const op of operations) {
      const next = [...run, op];
      const items = next.length * 2 + this.counters(tenantId, next, "commit").length;
      if (run.length > 0 && (items > OWN_TRANSACT_ITEMS || bytesOf(next) > PACK_BYTES)) {
        runs.push(run);
        run = [op];
      } else run = next;
    }
    if (run.length > 0) runs.push(run);
    return runs;
  }

  /** Claims after the tokens changed: a deleted token's released, an update's moved (best effort). */
  private async afterApply(tenantId: string, operations: Operation[]): Promise<void> {
    // Outside the request's claim, as the roll-forward: continuations of the committed effect.
    const indexed = operations.filter((op) => op.operation === "update" && op.next?.search_hashes);
    await outsideAnyRequest(() =>
      inGroups(indexed, (op) => this.tokens.settleSearchContainer(op.next as unknown as StoredToken)),
    );
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
  }
}
