import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import type { TokenRef } from "#shared/domain/access-rules.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { conflict } from "#shared/domain/errors.ts";
import { keyRefDelta, keySetRefs, partOf } from "#shared/domain/keys/key-refs.ts";
import { pendingClaim } from "#shared/domain/tokens/pending-claims.ts";
import {
  carriedCvcEnd,
  type StoredToken,
  type TokenHold,
  type TokenListFilter,
  type TransactionContext,
} from "#shared/domain/tokens/token.ts";
import type {
  CreateManyOutcome,
  PageRequest,
  StagedCreate,
  StageOutcome,
  StorePage,
  TokenAsRead,
  TokenCreateOutcome,
  TokenStore,
  WriteOutcome,
} from "#shared/ports/stores.ts";
import type { AuditItems } from "./audit-items.ts";
import { claimIfUnclaimed, fingerprintClaimItem, releaseFingerprint } from "./fingerprint-claims.ts";
import { keyCountUpdates } from "./key-counters.ts";
import { epochSeconds } from "./schema.ts";
import { removeDroppedSearchEntries, searchEntries, tokenSearchPuts } from "./search-index.ts";
import { tokenSweepPuts } from "./sweep-index.ts";
import { batchGetTokenItems } from "./token-batch-get.ts";
import { tokenFromItem, tokenItem, withoutLock } from "./token-items.ts";
import { tokenKeys } from "./token-keys.ts";
import { listTokenPage, listTokens } from "./token-listing.ts";
import { createAtOnce, stageCreates } from "./token-staging.ts";
import { LOCK_FREE, lockUpdate, transactionWrites } from "./token-transaction-writes.ts";
import { transactionKeys } from "./transaction-keys.ts";

/** How long this process trusts that a fingerprint it saw claimed is still claimed (as long as API keys). */
/** Best-effort claims sent at once after a batch commits. */
const CLAIMS_IN_FLIGHT = 10;

/** Tokens in DynamoDB: creates that claim fingerprints, guarded replaces and deletes, and transaction enrolment. */
/** How long a deduplicating create waits for another batch's pending create of its value: 12 × 250 ms. */
const BATCH_WAIT_LOOKS = 12;
const BATCH_WAIT_MS = 250;
const BATCH_BUSY = "A batch creating the same value is still being processed; retry shortly.";

export class DynamoTokenStore implements TokenStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async create(
    input: StoredToken,
    options: { deduplicate: boolean; idGiven?: boolean; now: Date; transaction?: TransactionContext },
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
    // A value already tokenized is answered from its claim before anything is written: the transaction below
    // would be cancelled by the claim's condition, and DynamoDB bills a cancelled transaction's writes (10 WCU for
    // a card, against 1 RCU for this read; docs/scale.md). Not when the caller chose the id: a taken id is its
    // answer first, and only the transaction tells.
    if (claim && !options.idGiven) {
      const ownerId = await this.claimOwner(token, options.now, transaction);
      if (ownerId) return { outcome: "duplicate", tokenId: ownerId } as TokenCreateOutcome;
    }
    for (let attempt = 0; attempt < 4; attempt++) {
      const transactItems = [
        {
          Put: {
            TableName: this.tableName,
            Item: tokenItem(token),
            ConditionExpression: "attribute_not_exists(PK)",
          },
        },
        ...(claim
          ? [
              {
                Put: {
                  TableName: this.tableName,
                  Item: fingerprintClaimItem(fingerprintKey, token.id),
                  ConditionExpression: "attribute_not_exists(PK)",
                },
              },
            ]
          : []),
        ...tokenSweepPuts(this.tableName, token),
        ...tokenSearchPuts(this.tableName, token),
        ...(transaction ? transactionWrites(this.tableName, token, transaction, "create", options.now) : []),
        ...keyCountUpdates(this.tableName, token.tenant_id, keyRefDelta(undefined, token), token.id),
        this.audit.put(audit),
      ];
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: transactItems }));
        // Best effort, and always sent: skipping it for a value seen claimed (5 s, until 27 Nov 2026) answered a
        // repeat of a stored value one write sooner, a timing test for a key that may not deduplicate.
        if (!claim) await claimIfUnclaimed(this.client, this.tableName, fingerprintKey, token.id);
        return { outcome: "created" } as TokenCreateOutcome;
      } catch (error) {
        const reasons = cancellationCodes(error);
        if (!reasons) throw error;
        if (reasons[0] === "ConditionalCheckFailed") return { outcome: "id-taken" } as TokenCreateOutcome;
        const transactionAt = transaction ? transactItems.findIndex((item) => "Update" in item) : -1;
        if (transactionAt >= 0 && reasons[transactionAt] === "ConditionalCheckFailed")
          return { outcome: "transaction-closed" } as TokenCreateOutcome;
        if (!claim || reasons[1] !== "ConditionalCheckFailed") throw error;
      }
      // The fingerprint is claimed: answer its live owner, or release a stale claim and try again.
      const ownerId = await this.claimOwner(token, options.now, transaction);
      if (ownerId) return { outcome: "duplicate", tokenId: ownerId } as TokenCreateOutcome;
    }
    throw new Error("Could not claim the token fingerprint");
  }

  /**
   * The live token holding `token`'s fingerprint claim, or undefined after releasing a stale claim (or when
   * none is held any more): the caller claims again.
   */
  private async claimOwner(
    token: StoredToken,
    now: Date,
    transaction: TransactionContext | undefined,
  ): Promise<string | undefined> {
    const fingerprintKey = tokenKeys.fingerprint(token.tenant_id, token.type, token.fingerprint);
    for (let look = 0; ; look++) {
      const owner = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: fingerprintKey, ConsistentRead: true }),
      );
      const ownerId = owner.Item?.token_id as string | undefined;
      if (!ownerId) return undefined;
      const existing = await this.get(token.tenant_id, ownerId);
      // A claim is honoured only for a live token whose current fingerprint is this one: a token whose data or
      // expression changed since it claimed (a stale claim) must never be handed back for this value. One another
      // transaction is still creating: as pending-claims.ts decides.
      const pending = pendingClaim(existing?.lock, transaction, now.getTime() / 1000);
      if (pending === "give-up" || (pending === "wait" && look >= BATCH_WAIT_LOOKS))
        throw conflict(BATCH_BUSY, { retryAfterSeconds: 1 });
      if (pending === "wait") {
        await new Promise((resolve) => setTimeout(resolve, BATCH_WAIT_MS));
        continue;
      }
      // A batch whose request died past its commit point: the sweep makes its creates live (at its expiry), so
      // its claims stand; taken over, the value would get a second token.
      const batch = existing?.lock?.transactionId;
      if (pending === "lapsed-batch" && batch && (await this.committed(token, batch)))
        throw conflict(BATCH_BUSY, { retryAfterSeconds: 60 });
      const live =
        existing &&
        pending === "not-pending" &&
        existing.type === token.type &&
        existing.fingerprint === token.fingerprint &&
        (!existing.expires_at || Date.parse(existing.expires_at) > now.getTime());
      if (live) return ownerId;
      // A claim left by a deleted, expired or changed token: release it (only if it still names that owner).
      await this.releaseFingerprint(token.tenant_id, token.type, token.fingerprint, ownerId);
      return undefined;
    }
  }

  /** Whether the transaction `id` of the token's tenant has committed (its operations may not all be applied). */
  private async committed(token: Pick<StoredToken, "tenant_id">, id: string): Promise<boolean> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: transactionKeys.record(token.tenant_id, id),
        ConsistentRead: true,
      }),
    );
    return out.Item?.state === "committed";
  }

  liveFingerprintOwner(tenantId: string, type: string, fingerprint: string, now: Date) {
    return this.claimOwner({ tenant_id: tenantId, type, fingerprint } as StoredToken, now, undefined);
  }

  stageCreates(entries: StagedCreate[], transaction: TransactionContext, now: Date): Promise<StageOutcome> {
    return stageCreates(this.client, this.tableName, this.audit, entries, transaction, now, (token) =>
      this.claimOwner(token, now, transaction),
    );
  }

  createAtOnce(entries: StagedCreate[], skip: Record<number, string>, now: Date): Promise<CreateManyOutcome> {
    return createAtOnce(this.client, this.tableName, this.audit, entries, skip, now, (token) =>
      this.claimOwner(token, now, undefined),
    );
  }

  async claimFingerprints(tokens: StoredToken[], _now: Date): Promise<void> {
    // A few at a time: best effort, and never more requests in flight than a batch needs.
    for (let i = 0; i < tokens.length; i += CLAIMS_IN_FLIGHT)
      await Promise.all(
        tokens
          .slice(i, i + CLAIMS_IN_FLIGHT)
          .map((token) =>
            claimIfUnclaimed(
              this.client,
              this.tableName,
              tokenKeys.fingerprint(token.tenant_id, token.type, token.fingerprint),
              token.id,
            ),
          ),
      );
  }

  /**
   * The token `id` of `tenantId`: found by a key built from the tenant, and answered only if the item itself names
   * that tenant (every read of a token passes here or getMany: the tenant boundary does not rest on the key alone).
   */
  async get(tenantId: string, id: string): Promise<StoredToken | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: tokenKeys.token(tenantId, id), ConsistentRead: true }),
    );
    return out.Item && out.Item.tenant_id === tenantId ? tokenFromItem(out.Item) : undefined;
  }

  async getMany(tenantId: string, ids: string[]): Promise<StoredToken[]> {
    const unique = [...new Set(ids)];
    const { items } = await batchGetTokenItems(this.client, this.tableName, tenantId, unique, {
      consistent: true,
    });
    const found = items.map(tokenFromItem);
    const order = new Map(unique.map((id, index) => [id, index]));
    return found.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }

  list(tenantId: string, filter: TokenListFilter, page: PageRequest): Promise<StorePage<StoredToken>> {
    return listTokens(this.client, this.tableName, tenantId, filter, page);
  }

  page(tenantId: string, filter: TokenListFilter, size: number, after: string | undefined) {
    return listTokenPage(this.client, this.tableName, tenantId, filter, size, after);
  }

  async replace(
    given: StoredToken,
    expectedVersion: number,
    audit: LogEntry,
    options: {
      now: Date;
      transaction?: TokenHold;
      previous: TokenAsRead;
      previousFingerprint?: string;
      previousSearchHashes?: string[];
    },
  ): Promise<WriteOutcome> {
    // Replaces write no lock: in a transaction the hold is the lock update's; outside one, none is taken.
    const token = withoutLock(given);
    const { transaction, now, previousFingerprint } = options;
    // The keys the token stops or starts needing; in a transaction only what the pending version adds is counted
    // now (reserved), the rest at commit (transaction-store.ts).
    const delta = keyRefDelta(options.previous, token);
    const counters = keyCountUpdates(
      this.tableName,
      token.tenant_id,
      transaction ? partOf(delta, 1) : delta,
      token.id,
    );
    if (!transaction && previousFingerprint !== undefined && previousFingerprint !== token.fingerprint) {
      const outcome = await this.replaceMovingClaim(
        token,
        expectedVersion,
        audit,
        now,
        options.previous,
        previousFingerprint,
        counters,
      );
      if (outcome === "ok") await this.dropSearchEntries(token, options.previousSearchHashes);
      return outcome;
    }
    const guard = replaceGuard(token, expectedVersion, options.previous, now);
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
          ...transactionWrites(
            this.tableName,
            token,
            transaction,
            "update",
            now,
            token,
            previousFingerprint,
            {
              before: keySetRefs(options.previous),
              after: keySetRefs(token),
            },
          ),
          // Written now: a search checks the token's current hashes, so they answer only once it commits; the
          // sweep checks the token itself, so the staged version's expiry and cvc are due only once it commits.
          ...tokenSearchPuts(this.tableName, token, {
            // Unknown (a caller passing less than the stored token): no container, judged by the token item.
            container:
              (options.previous as Partial<Pick<StoredToken, "container">>).container === token.container,
          }),
          ...tokenSweepPuts(this.tableName, token),
        ]
      : [
          { Put: { TableName: this.tableName, Item: tokenItem(token), ...guard } },
          ...tokenSweepPuts(this.tableName, token),
          ...tokenSearchPuts(this.tableName, token),
        ];
    const outcome = await this.write(
      [...items, ...counters, this.audit.put(audit)],
      transaction ? 1 : undefined,
    );
    if (outcome === "ok" && !transaction) await this.dropSearchEntries(token, options.previousSearchHashes);
    return outcome;
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
    previous: TokenAsRead,
    previousFingerprint: string,
    counters: object[],
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
            ...replaceGuard(token, expectedVersion, previous, now),
          },
        },
        ...claimItems,
        ...tokenSweepPuts(this.tableName, token),
        ...tokenSearchPuts(this.tableName, token),
        ...counters,
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
    options: { now: Date; transaction?: TokenHold },
  ): Promise<WriteOutcome> {
    const { transaction, now } = options;
    const key = tokenKeys.token(token.tenant_id, token.id);
    // Only the version read, held or deleted: its key set is what the count loses (at commit in a transaction; a
    // reseal between the read and the hold used to make the commit count off the keys the token no longer used).
    const guard = {
      ConditionExpression: `attribute_exists(PK) AND ${LOCK_FREE} AND #version = :version`,
      ExpressionAttributeNames: { "#version": "version" },
      ExpressionAttributeValues: { ":now": epochSeconds(now), ":version": token.version },
    };
    const items = transaction
      ? [
          lockUpdate(this.tableName, key, transaction, "delete", guard),
          ...transactionWrites(this.tableName, token, transaction, "delete", now, undefined, undefined, {
            before: keySetRefs(token),
            after: [],
          }),
        ]
      : [
          { Delete: { TableName: this.tableName, Key: key, ...guard } },
          ...keyCountUpdates(this.tableName, token.tenant_id, keyRefDelta(token, undefined), token.id),
        ];
    const outcome = await this.write([...items, this.audit.put(audit)], transaction ? 1 : undefined);
    // The fingerprint claim goes after the token; a claim left behind is released by the next deduplicating create.
    if (outcome === "ok" && !transaction) {
      await this.releaseFingerprint(token.tenant_id, token.type, token.fingerprint, token.id);
      await this.dropSearchEntries(undefined, token.search_hashes, token);
    }
    return outcome;
  }

  /**
   * After a committed replace or delete: the lookup items of hashes the token no longer has. Best effort (a
   * search ignores and removes any left behind, see search-index.ts).
   */
  private async dropSearchEntries(
    next: StoredToken | undefined,
    previous: string[] | undefined,
    owner: Pick<StoredToken, "tenant_id" | "id"> | undefined = next,
  ): Promise<void> {
    if (!owner || !previous?.length) return;
    const kept = new Set(next?.search_hashes ?? []);
    const dropped = [...new Set(previous.filter((hash) => !kept.has(hash)))];
    await removeDroppedSearchEntries(this.client, this.tableName, owner, dropped);
  }

  async searchEntries(
    tenantId: string,
    hashes: string[],
    size: number,
    after: string | undefined,
    visible?: (token: TokenRef) => boolean,
  ) {
    return searchEntries(this.client, this.tableName, tenantId, hashes, size, after, visible);
  }

  /**
   * After a committed update: its lookup items again name the token's container. A move staged in a transaction
   * wrote them without one, and the commit writes only the token item, so they stayed without one for good (every
   * search of the value, by any caller, read the token items to judge them). Only while the token is unheld and
   * still this version in this container: a move staged meanwhile writes its own items after, in the write that
   * holds the token. Best effort (a search still judges an item without a container by its token item).
   */
  async settleSearchContainer(token: StoredToken): Promise<void> {
    const puts = tokenSearchPuts(this.tableName, token);
    if (puts.length === 0) return;
    const unchanged = {
      ConditionCheck: {
        TableName: this.tableName,
        Key: tokenKeys.token(token.tenant_id, token.id),
        ConditionExpression: "attribute_not_exists(txn_id) AND #v = :v AND #c = :c",
        ExpressionAttributeNames: { "#v": "version", "#c": "container" },
        ExpressionAttributeValues: { ":v": token.version, ":c": token.container },
      },
    };
    // Best effort, whatever failed (a refused condition, throttling, the network): it runs after a commit, and its
    // failure must not skip the claims' moves and the op items' removal after it, nor fail a commit made (review
    // round 30). A search judges an item without a container by its token item.
    await this.write([unchanged, ...puts]).catch(() => undefined);
  }

  async removeStaleSearchEntry(token: Pick<StoredToken, "tenant_id" | "id">, hash: string): Promise<void> {
    // Before, an unconditional delete on a token the search read earlier: a write giving the token this hash in
    // between lost its lookup item, the token not found by that value until its next write (review round 30).
    await removeDroppedSearchEntries(this.client, this.tableName, token, [hash]);
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

  async releaseFingerprint(tenantId: string, type: string, fingerprint: string, tokenId: string) {
    await releaseFingerprint(this.client, this.tableName, { tenantId, type, fingerprint, tokenId });
  }
}

/**
 * A replace's condition: the version it read, no live transaction's hold, and, when it writes back the cvc it
 * read, that cvc still there: the sweep removes a cvc at the end of its hour without a new version (an idempotent
 * replay of the creation must still answer), so a PATCH or reseal that read it just before must not restore it.
 */
function replaceGuard(token: StoredToken, expectedVersion: number, previous: TokenAsRead, now: Date) {
  const cvcEnd = carriedCvcEnd(token, previous);
  return {
    ConditionExpression: `#version = :expected AND ${LOCK_FREE}${cvcEnd ? " AND cvc_expires_at = :cvcEnd" : ""}`,
    ExpressionAttributeNames: { "#version": "version" },
    ExpressionAttributeValues: {
      ":expected": expectedVersion,
      ":now": epochSeconds(now),
      ...(cvcEnd ? { ":cvcEnd": cvcEnd } : {}),
    },
  };
}
