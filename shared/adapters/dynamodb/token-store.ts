import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { BatchGetCommand, GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { StoredToken, TokenListFilter, TransactionContext } from "#shared/domain/tokens/token.ts";
import type {
  PageRequest,
  StorePage,
  TokenCreateOutcome,
  TokenStore,
  WriteOutcome,
} from "#shared/ports/stores.ts";
import type { AuditItems } from "./audit-items.ts";
import { cancellationCodes } from "./client.ts";
import {
  claimIfUnclaimed,
  claimIfUnclaimedUpdate,
  fingerprintClaimItem,
  releaseFingerprint,
} from "./fingerprint-claims.ts";
import { epochSeconds } from "./schema.ts";
import { tokenSweepPuts } from "./sweep-index.ts";
import { tokenFromItem, tokenItem } from "./token-items.ts";
import { tokenKeys } from "./token-keys.ts";
import { listTokens } from "./token-listing.ts";
import { LOCK_FREE, lockUpdate, transactionWrites } from "./token-transaction-writes.ts";

/** Tokens in DynamoDB: creates that claim fingerprints, guarded replaces and deletes, and transaction enrolment. */
export class DynamoTokenStore implements TokenStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async create(
    input: StoredToken,
    options: { deduplicate: boolean; now: Date; transaction?: TransactionContext },
    audit: LogEntry,
  ) {
    const { transaction } = options;
    const token: StoredToken = transaction
      ? {
          ...input,
          lock: {
            transactionId: transaction.id,
            operation: "create",
            expiresEpoch: transaction.expiresEpoch,
          },
        }
      : input;
    const fingerprintKey = tokenKeys.fingerprint(token.tenant_id, token.type, token.fingerprint);
    // A deduplicating create claims the fingerprint inside its transaction, failing if it is taken (race-safe).
    // Any other create must not fail because the value is already tokenized: its transaction claims the
    // fingerprint only if nobody has (an Update that never fails), so later deduplicating creates find a token,
    // without a cancelled transaction or a failing request on every repeat.
    const deduplicate = options.deduplicate;
    for (let attempt = 0; attempt < 4; attempt++) {
      const claimItem = deduplicate
        ? {
            Put: {
              TableName: this.tableName,
              Item: fingerprintClaimItem(fingerprintKey, token.id),
              ConditionExpression: "attribute_not_exists(PK)",
            },
          }
        : claimIfUnclaimedUpdate(this.tableName, fingerprintKey, token.id);
      const sweepPuts = tokenSweepPuts(this.tableName, token);
      const enrolment = transaction
        ? transactionWrites(this.tableName, token, transaction, "create", options.now)
        : [];
      const transactItems = [
        {
          Put: {
            TableName: this.tableName,
            Item: tokenItem(token),
            ConditionExpression: "attribute_not_exists(PK)",
          },
        },
        claimItem,
        ...sweepPuts,
        ...enrolment,
        this.audit.put(audit),
      ];
      // Where the transaction record's update sits (its condition says whether the transaction is still open).
      const transactionAt = enrolment.length > 0 ? 2 + sweepPuts.length : -1;
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: transactItems }));
        return { outcome: "created" } as TokenCreateOutcome;
      } catch (error) {
        const reasons = cancellationCodes(error);
        if (!reasons) throw error;
        if (reasons[0] === "ConditionalCheckFailed") return { outcome: "id-taken" } as TokenCreateOutcome;
        if (transactionAt >= 0 && reasons[transactionAt] === "ConditionalCheckFailed")
          return { outcome: "transaction-closed" } as TokenCreateOutcome;
        if (!deduplicate || reasons[1] !== "ConditionalCheckFailed") throw error;
      }
      // The fingerprint is claimed: answer its live owner, or release a stale claim and try again.
      const owner = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: fingerprintKey, ConsistentRead: true }),
      );
      const ownerId = owner.Item?.token_id as string | undefined;
      if (!ownerId) continue;
      const existing = await this.get(token.tenant_id, ownerId);
      // A claim is honoured only for a live token whose current fingerprint is this one: a token whose data or
      // expression changed since it claimed (a stale claim) must never be handed back for this value.
      const live =
        existing &&
        existing.type === token.type &&
        existing.fingerprint === token.fingerprint &&
        (!existing.expires_at || Date.parse(existing.expires_at) > options.now.getTime());
      if (live) return { outcome: "duplicate", tokenId: ownerId } as TokenCreateOutcome;
      // A claim left by a deleted, expired or changed token: release it (only if it still names that owner),
      // then claim again.
      await this.releaseFingerprint(token.tenant_id, token.type, token.fingerprint, ownerId);
    }
    throw new Error("Could not claim the token fingerprint");
  }

  async get(tenantId: string, id: string): Promise<StoredToken | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: tokenKeys.token(tenantId, id), ConsistentRead: true }),
    );
    return out.Item ? tokenFromItem(out.Item) : undefined;
  }

  async getMany(tenantId: string, ids: string[]): Promise<StoredToken[]> {
    const unique = [...new Set(ids)];
    const found: StoredToken[] = [];
    for (let i = 0; i < unique.length; i += 100) {
      let keys: Record<string, unknown>[] = unique
        .slice(i, i + 100)
        .map((id) => tokenKeys.token(tenantId, id));
      for (let attempt = 0; keys.length > 0 && attempt < 6; attempt++) {
        const out = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        found.push(...(out.Responses?.[this.tableName] ?? []).map((item) => tokenFromItem(item)));
        keys = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    const order = new Map(unique.map((id, index) => [id, index]));
    return found.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }

  list(tenantId: string, filter: TokenListFilter, page: PageRequest): Promise<StorePage<StoredToken>> {
    return listTokens(this.client, this.tableName, tenantId, filter, page);
  }

  async replace(
    token: StoredToken,
    expectedVersion: number,
    audit: LogEntry,
    options: { now: Date; transaction?: TransactionContext; previousFingerprint?: string },
  ): Promise<WriteOutcome> {
    const { transaction, now, previousFingerprint } = options;
    if (!transaction && previousFingerprint !== undefined && previousFingerprint !== token.fingerprint)
      return this.replaceMovingClaim(token, expectedVersion, audit, now, previousFingerprint);
    const guard = {
      ConditionExpression: `#version = :expected AND ${LOCK_FREE}`,
      ExpressionAttributeNames: { "#version": "version" },
      ExpressionAttributeValues: { ":expected": expectedVersion, ":now": epochSeconds(now) },
    };
    const items = transaction
      ? [
          // The token keeps its current version for everyone else; the new one waits on the op item.
          lockUpdate(
            this.tableName,
            tokenKeys.token(token.tenant_id, token.id),
            transaction,
            "update",
            guard,
          ),
          ...transactionWrites(this.tableName, token, transaction, "update", now, token, previousFingerprint),
        ]
      : [
          { Put: { TableName: this.tableName, Item: tokenItem(token), ...guard } },
          ...tokenSweepPuts(this.tableName, token),
        ];
    return this.write([...items, this.audit.put(audit)], transaction ? 1 : undefined);
  }

  /**
   * Replaces a token whose fingerprint changed, moving its claim in the same transaction: the old claim is
   * released if this token holds it, the new fingerprint is claimed if free. So a deduplicating create finds the
   * token under its new value and never under its old one. A claim that changed between the read and the write
   * is read again (a few times); the token's own version guard failing is a conflict.
   */
  private async replaceMovingClaim(
    token: StoredToken,
    expectedVersion: number,
    audit: LogEntry,
    now: Date,
    previousFingerprint: string,
  ): Promise<WriteOutcome> {
    const oldKey = tokenKeys.fingerprint(token.tenant_id, token.type, previousFingerprint);
    const newKey = tokenKeys.fingerprint(token.tenant_id, token.type, token.fingerprint);
    for (let attempt = 0; attempt < 4; attempt++) {
      const [oldClaim, newClaim] = await Promise.all(
        [oldKey, newKey].map((Key) =>
          this.client.send(new GetCommand({ TableName: this.tableName, Key, ConsistentRead: true })),
        ),
      );
      const claimItems = [
        ...(oldClaim?.Item?.token_id === token.id
          ? [
              {
                Delete: {
                  TableName: this.tableName,
                  Key: oldKey,
                  ConditionExpression: "token_id = :id",
                  ExpressionAttributeValues: { ":id": token.id },
                },
              },
            ]
          : []),
        ...(newClaim?.Item
          ? []
          : [
              {
                Put: {
                  TableName: this.tableName,
                  Item: fingerprintClaimItem(newKey, token.id),
                  ConditionExpression: "attribute_not_exists(PK)",
                },
              },
            ]),
      ];
      const items = [
        {
          Put: {
            TableName: this.tableName,
            Item: tokenItem(token),
            ConditionExpression: `#version = :expected AND ${LOCK_FREE}`,
            ExpressionAttributeNames: { "#version": "version" },
            ExpressionAttributeValues: { ":expected": expectedVersion, ":now": epochSeconds(now) },
          },
        },
        ...claimItems,
        ...tokenSweepPuts(this.tableName, token),
        this.audit.put(audit),
      ];
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: items as never }));
        return "ok";
      } catch (error) {
        const reasons = cancellationCodes(error);
        if (!reasons) throw error;
        if (reasons[0] === "ConditionalCheckFailed") return "conflict";
        const claimFailed = reasons
          .slice(1, 1 + claimItems.length)
          .some((reason) => reason === "ConditionalCheckFailed");
        if (!claimFailed) {
          if (reasons.includes("ConditionalCheckFailed")) return "conflict";
          throw error;
        }
      }
    }
    return "conflict";
  }

  async delete(
    token: StoredToken,
    audit: LogEntry,
    options: { now: Date; transaction?: TransactionContext },
  ): Promise<WriteOutcome> {
    const { transaction, now } = options;
    const key = tokenKeys.token(token.tenant_id, token.id);
    const guard = {
      ConditionExpression: `attribute_exists(PK) AND ${LOCK_FREE}`,
      ExpressionAttributeValues: { ":now": epochSeconds(now) },
    };
    const items = transaction
      ? [
          lockUpdate(this.tableName, key, transaction, "delete", guard),
          ...transactionWrites(this.tableName, token, transaction, "delete", now),
        ]
      : [{ Delete: { TableName: this.tableName, Key: key, ...guard } }];
    const outcome = await this.write([...items, this.audit.put(audit)], transaction ? 1 : undefined);
    // The fingerprint claim goes after the token; a claim left behind is released by the next deduplicating create.
    if (outcome === "ok" && !transaction)
      await this.releaseFingerprint(token.tenant_id, token.type, token.fingerprint, token.id);
    return outcome;
  }

  /** Runs a write transaction and names why it was refused: the token changed or is held, or the transaction closed. */
  private async write(items: object[], transactionRecordAt?: number): Promise<WriteOutcome> {
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: items as never }));
      return "ok";
    } catch (error) {
      const reasons = cancellationCodes(error);
      if (!reasons) throw error;
      if (transactionRecordAt !== undefined && reasons[transactionRecordAt] === "ConditionalCheckFailed")
        return "transaction-closed";
      if (reasons.includes("ConditionalCheckFailed")) return "conflict";
      throw error;
    }
  }

  /** After a committed update changed a token's fingerprint: release its old claim if it holds it, claim the new one if free. */
  async moveClaim(tenantId: string, type: string, from: string, to: string, tokenId: string) {
    await this.releaseFingerprint(tenantId, type, from, tokenId);
    await claimIfUnclaimed(this.client, this.tableName, tokenKeys.fingerprint(tenantId, type, to), tokenId);
  }

  releaseFingerprint(tenantId: string, type: string, fingerprint: string, tokenId: string) {
    return releaseFingerprint(this.client, this.tableName, { tenantId, type, fingerprint, tokenId });
  }
}
