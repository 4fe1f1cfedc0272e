import { createHash } from "node:crypto";
import type { DynamoDBDocumentClient, QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import { validationError } from "#shared/domain/errors.ts";
import type { StoredToken, TokenListFilter, TransactionContext } from "#shared/domain/tokens/token.ts";
import type {
  PageRequest,
  StorePage,
  TokenCreateOutcome,
  TokenStore,
  WriteOutcome,
} from "#shared/ports/stores.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { cancellationCodes, isConditionalCheckFailed } from "./client.ts";
import { countQuery, decodeCursor, encodeCursor, queryUpTo } from "./paging.ts";
import { epochSeconds, TABLE_KEYS } from "./schema.ts";
import { MAX_TRANSACTION_OPERATIONS, transactionKeys } from "./transaction-keys.ts";

/** A tenant's token listing is spread over this many GSI1 partitions (write sharding). */
export const TOKEN_SHARDS = 8;
/** Offset paging of tokens reads page × size entries per shard, so it is capped; use `start` beyond. */
export const MAX_TOKEN_OFFSET = 10_000;
/** Expired tokens are deleted by the sweep; DynamoDB TTL removes any it missed this long after expiry. */
export const TTL_BACKSTOP_SECONDS = 3600;
export const SWEEP_SHARDS = 8;

const STORE_ONLY = ["metadata_lc", "expires_epoch", "txn_id", "txn_op", "txn_expires_epoch"] as const;

/** A write may proceed when no transaction holds the token, or the one that did has expired. */
const LOCK_FREE = "(attribute_not_exists(txn_id) OR txn_expires_epoch <= :now)";

function shardOf(id: string, shards: number): number {
  return createHash("sha256").update(id).digest().readUInt16BE(0) % shards;
}

export const tokenKeys = {
  token: (tenantId: string, id: string) => ({ PK: `TOKEN#${tenantId}#${id}`, SK: "META" }),
  listing: (tenantId: string, shard: number) => `TENANT#${tenantId}#TOKENS#${shard}`,
  fingerprint: (tenantId: string, type: string, fingerprint: string) => ({
    PK: `FP#${tenantId}#${type}#${fingerprint}`,
    SK: "META",
  }),
  /** Hour bucket of the sweep index: tokens (T) and cvcs (C) due in that hour. */
  sweepBucket: (at: Date, shard: number) => `SWEEP#${at.toISOString().slice(0, 13)}#${shard}`,
} as const;

function lowerMap(map: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!map) return undefined;
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k.toLowerCase(), v.toLowerCase()]));
}

/**
 * One entry of the sweep index: something of a tenant that falls due at `dueAt` — a token's expiry (T), a cvc's
 * end (C), an open transaction's expiry (X) or a session's (S). The sweep reads these by hour bucket.
 */
export function sweepEntryPut(
  tableName: string,
  entry: {
    kind: "T" | "C" | "X" | "S";
    tenantId: string;
    entityId: string;
    tokenType?: string;
    dueAt: string;
    shard?: number;
  },
) {
  return {
    Put: {
      TableName: tableName,
      Item: {
        PK: tokenKeys.sweepBucket(new Date(entry.dueAt), entry.shard ?? 0),
        SK: `${entry.kind}#${entry.tenantId}#${entry.entityId}`,
        entity: "sweep",
        kind: entry.kind,
        tenant_id: entry.tenantId,
        token_id: entry.entityId,
        token_type: entry.tokenType ?? "token",
        due_at: entry.dueAt,
        ttl: epochSeconds(new Date(entry.dueAt)) + 7 * 86_400,
      },
    },
  };
}

/** Drops a fingerprint claim if (and only if) it still names this token. */
export async function releaseFingerprint(
  client: DynamoDBDocumentClient,
  tableName: string,
  claim: { tenantId: string; type: string; fingerprint: string; tokenId: string },
): Promise<void> {
  await client
    .send(
      new DeleteCommand({
        TableName: tableName,
        Key: tokenKeys.fingerprint(claim.tenantId, claim.type, claim.fingerprint),
        ConditionExpression: "token_id = :id",
        ExpressionAttributeValues: { ":id": claim.tokenId },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailed(error)) throw error;
    });
}

export class DynamoTokenStore implements TokenStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  item(token: StoredToken): Record<string, unknown> {
    const expiresEpoch = token.expires_at ? epochSeconds(new Date(token.expires_at)) : undefined;
    const { lock, ...fields } = token;
    return {
      ...tokenKeys.token(token.tenant_id, token.id),
      GSI1PK: tokenKeys.listing(token.tenant_id, shardOf(token.id, TOKEN_SHARDS)),
      GSI1SK: `${token.created_at}#${token.id}`,
      entity: "token",
      ...fields,
      metadata_lc: lowerMap(token.metadata),
      ...(lock
        ? { txn_id: lock.transactionId, txn_op: lock.operation, txn_expires_epoch: lock.expiresEpoch }
        : {}),
      ...(expiresEpoch !== undefined
        ? { expires_epoch: expiresEpoch, ttl: expiresEpoch + TTL_BACKSTOP_SECONDS }
        : {}),
    };
  }

  private fromItem(item: Record<string, unknown>): StoredToken {
    const token = stripKeys<Record<string, unknown>>(item);
    for (const attribute of STORE_ONLY) delete token[attribute];
    if (typeof item.txn_id === "string")
      token.lock = {
        transactionId: item.txn_id,
        operation: item.txn_op,
        expiresEpoch: Number(item.txn_expires_epoch),
      };
    return token as unknown as StoredToken;
  }

  /** The writes that enrol a token operation in an open transaction: its op item and the record's count. */
  private transactionWrites(
    token: StoredToken,
    transaction: TransactionContext,
    operation: "create" | "update" | "delete",
    now: Date,
    next?: StoredToken,
    previousFingerprint?: string,
  ) {
    return [
      {
        Update: {
          TableName: this.tableName,
          Key: transactionKeys.record(token.tenant_id, transaction.id),
          UpdateExpression: "ADD op_count :one",
          ConditionExpression:
            "#state = :open AND expires_epoch > :now AND (attribute_not_exists(op_count) OR op_count < :max)",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: {
            ":one": 1,
            ":open": "open",
            ":now": epochSeconds(now),
            ":max": MAX_TRANSACTION_OPERATIONS,
          },
        },
      },
      {
        Put: {
          TableName: this.tableName,
          Item: {
            ...transactionKeys.operation(token.tenant_id, transaction.id, token.id),
            entity: "transaction_operation",
            operation,
            token_id: token.id,
            token_type: token.type,
            fingerprint: token.fingerprint,
            ...(previousFingerprint !== undefined && previousFingerprint !== token.fingerprint
              ? { previous_fingerprint: previousFingerprint }
              : {}),
            ...(next ? { next: this.item(next) } : {}),
            ttl: transaction.expiresEpoch + 7 * 86_400,
          },
          // One operation per token per transaction.
          ConditionExpression: "attribute_not_exists(PK)",
        },
      },
    ];
  }

  /** Index entries that let the sweep find what falls due: the token's expiry and its cvc's. */
  private sweepPuts(token: StoredToken) {
    const due: ["T" | "C", string][] = [];
    if (token.expires_at) due.push(["T", token.expires_at]);
    if (token.sealed_cvc && token.cvc_expires_at) due.push(["C", token.cvc_expires_at]);
    return due.map(([kind, dueAt]) =>
      sweepEntryPut(this.tableName, {
        kind,
        tenantId: token.tenant_id,
        entityId: token.id,
        tokenType: token.type,
        dueAt,
        shard: shardOf(token.id, SWEEP_SHARDS),
      }),
    );
  }

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
    // A deduplicating create claims the fingerprint inside its transaction (race-safe). Any other create must
    // not fail because the value is already tokenized: it claims afterwards, only if nobody has (best effort),
    // so later deduplicating creates find a token, without a cancelled transaction on every repeat.
    const claim = options.deduplicate;
    for (let attempt = 0; attempt < 4; attempt++) {
      const transactItems = [
        {
          Put: {
            TableName: this.tableName,
            Item: this.item(token),
            ConditionExpression: "attribute_not_exists(PK)",
          },
        },
        ...(claim
          ? [
              {
                Put: {
                  TableName: this.tableName,
                  Item: { ...fingerprintKey, entity: "fingerprint", token_id: token.id },
                  ConditionExpression: "attribute_not_exists(PK)",
                },
              },
            ]
          : []),
        ...this.sweepPuts(token),
        ...(transaction ? this.transactionWrites(token, transaction, "create", options.now) : []),
        this.audit.put(audit),
      ];
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: transactItems }));
        if (!claim) await this.claimIfUnclaimed(fingerprintKey, token.id);
        return { outcome: "created" } as TokenCreateOutcome;
      } catch (error) {
        const reasons = cancellationCodes(error);
        if (!reasons) throw error;
        if (reasons[0] === "ConditionalCheckFailed") return { outcome: "id-taken" } as TokenCreateOutcome;
        const transactionAt = transactItems.findIndex((item) => "Update" in item);
        if (transactionAt >= 0 && reasons[transactionAt] === "ConditionalCheckFailed")
          return { outcome: "transaction-closed" } as TokenCreateOutcome;
        if (!claim || reasons[1] !== "ConditionalCheckFailed") throw error;
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
    return out.Item ? this.fromItem(out.Item) : undefined;
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
        found.push(...(out.Responses?.[this.tableName] ?? []).map((item) => this.fromItem(item)));
        keys = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    const order = new Map(unique.map((id, index) => [id, index]));
    return found.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }

  async list(tenantId: string, filter: TokenListFilter, page: PageRequest): Promise<StorePage<StoredToken>> {
    const cursor = page.start === undefined ? undefined : decodeCursor(page.start);
    if (page.start !== undefined && cursor === undefined)
      throw validationError("The start cursor is invalid.");
    const offset = cursor ? 0 : (page.page - 1) * page.size;
    if (offset + page.size > MAX_TOKEN_OFFSET)
      throw validationError(
        `Offset paging is limited to the first ${MAX_TOKEN_OFFSET} tokens; use the start cursor from pagination.next.`,
      );
    const expression = new FilterBuilder();
    expression.add(
      `(attribute_not_exists(${expression.name("expires_epoch")}) OR ${expression.name("expires_epoch")} > ${expression.value(epochSeconds(filter.now))})`,
    );
    // Tokens created in a transaction stay invisible until it commits.
    expression.add(
      `(attribute_not_exists(${expression.name("txn_op")}) OR ${expression.name("txn_op")} <> ${expression.value("create")})`,
    );
    if (filter.types?.length)
      expression.add(
        `${expression.name("type")} IN (${filter.types.map((t) => expression.value(t)).join(", ")})`,
      );
    for (const [key, value] of Object.entries(filter.metadata ?? {}))
      expression.add(
        `${expression.name("metadata_lc")}.${expression.name(key)} = ${expression.value(value)}`,
      );
    if (filter.visibility) {
      if (filter.visibility.length === 0) return { items: [], total: 0 };
      const clauses = filter.visibility.map((clause) => {
        const parts: string[] = [];
        if (clause.containerPrefix !== undefined)
          parts.push(
            `begins_with(${expression.name("container")}, ${expression.value(clause.containerPrefix)})`,
          );
        if (clause.containerEquals !== undefined)
          parts.push(`${expression.name("container")} = ${expression.value(clause.containerEquals)}`);
        if (clause.idEquals !== undefined)
          parts.push(`${expression.name("id")} = ${expression.value(clause.idEquals)}`);
        if (clause.idPrefix !== undefined)
          parts.push(`begins_with(${expression.name("id")}, ${expression.value(clause.idPrefix)})`);
        return parts.length ? parts.join(" AND ") : "attribute_exists(PK)";
      });
      // DynamoDB refuses redundant parentheses: group only where precedence needs it.
      const many = clauses.length > 1;
      expression.add(
        many
          ? `(${clauses.map((c) => (c.includes(" AND ") ? `(${c})` : c)).join(" OR ")})`
          : (clauses[0] as string),
      );
    }
    const base = (shard: number, upper: string): QueryCommandInput => ({
      TableName: this.tableName,
      IndexName: TABLE_KEYS.gsi1Name,
      KeyConditionExpression: "#gpk = :gpk AND #gsk < :upper",
      FilterExpression: expression.text(),
      ExpressionAttributeNames: {
        ...expression.names,
        "#gpk": TABLE_KEYS.gsi1PartitionKey,
        "#gsk": TABLE_KEYS.gsi1SortKey,
      },
      ExpressionAttributeValues: {
        ...expression.values,
        ":gpk": tokenKeys.listing(tenantId, shard),
        ":upper": upper,
      },
      ScanIndexForward: false,
    });
    const shards = Array.from({ length: TOKEN_SHARDS }, (_, shard) => shard);
    const wanted = offset + page.size + 1;
    const [chunks, counts] = await Promise.all([
      Promise.all(shards.map((shard) => queryUpTo(this.client, base(shard, cursor ?? "~"), wanted))),
      Promise.all(shards.map((shard) => countQuery(this.client, base(shard, "~")))),
    ]);
    const merged = chunks.flat().sort((a, b) => String(b.GSI1SK).localeCompare(String(a.GSI1SK)));
    const pageItems = merged.slice(offset, offset + page.size);
    const last = pageItems.at(-1);
    return {
      items: pageItems.map((item) => this.fromItem(item)),
      total: counts.reduce((sum, n) => sum + n, 0),
      ...(merged.length > offset + page.size && last ? { next: encodeCursor(String(last.GSI1SK)) } : {}),
    };
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
          {
            // The token keeps its current version for everyone else; the new one waits on the op item.
            Update: {
              TableName: this.tableName,
              Key: tokenKeys.token(token.tenant_id, token.id),
              UpdateExpression: "SET txn_id = :txn, txn_op = :op, txn_expires_epoch = :txnExpires",
              ...guard,
              ExpressionAttributeValues: {
                ...guard.ExpressionAttributeValues,
                ":txn": transaction.id,
                ":op": "update",
                ":txnExpires": transaction.expiresEpoch,
              },
            },
          },
          ...this.transactionWrites(token, transaction, "update", now, token, previousFingerprint),
        ]
      : [{ Put: { TableName: this.tableName, Item: this.item(token), ...guard } }, ...this.sweepPuts(token)];
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
                  Item: { ...newKey, entity: "fingerprint", token_id: token.id },
                  ConditionExpression: "attribute_not_exists(PK)",
                },
              },
            ]),
      ];
      const items = [
        {
          Put: {
            TableName: this.tableName,
            Item: this.item(token),
            ConditionExpression: `#version = :expected AND ${LOCK_FREE}`,
            ExpressionAttributeNames: { "#version": "version" },
            ExpressionAttributeValues: { ":expected": expectedVersion, ":now": epochSeconds(now) },
          },
        },
        ...claimItems,
        ...this.sweepPuts(token),
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
          {
            Update: {
              TableName: this.tableName,
              Key: key,
              UpdateExpression: "SET txn_id = :txn, txn_op = :op, txn_expires_epoch = :txnExpires",
              ...guard,
              ExpressionAttributeValues: {
                ...guard.ExpressionAttributeValues,
                ":txn": transaction.id,
                ":op": "delete",
                ":txnExpires": transaction.expiresEpoch,
              },
            },
          },
          ...this.transactionWrites(token, transaction, "delete", now),
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

  private async claimIfUnclaimed(fingerprintKey: { PK: string; SK: string }, tokenId: string) {
    await this.client
      .send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...fingerprintKey, entity: "fingerprint", token_id: tokenId },
          ConditionExpression: "attribute_not_exists(PK)",
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionalCheckFailed(error)) throw error;
      });
  }

  /** After a committed update changed a token's fingerprint: release its old claim if it holds it, claim the new one if free. */
  async moveClaim(tenantId: string, type: string, from: string, to: string, tokenId: string) {
    await this.releaseFingerprint(tenantId, type, from, tokenId);
    await this.claimIfUnclaimed(tokenKeys.fingerprint(tenantId, type, to), tokenId);
  }

  releaseFingerprint(tenantId: string, type: string, fingerprint: string, tokenId: string) {
    return releaseFingerprint(this.client, this.tableName, { tenantId, type, fingerprint, tokenId });
  }
}

/** Builds a filter expression with `#n`/`:v` placeholders only; no request text ever enters the expression. */
class FilterBuilder {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly parts: string[] = [];
  private counter = 0;

  name(attribute: string): string {
    const existing = Object.entries(this.names).find(([, v]) => v === attribute)?.[0];
    if (existing) return existing;
    const placeholder = `#n${this.counter++}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${this.counter++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  add(part: string): void {
    this.parts.push(part);
  }

  text(): string {
    return this.parts.join(" AND ");
  }
}
