import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, PutCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { ReactorToStore, StoredFormula, StoredReactor } from "#shared/domain/reactors/model.ts";
import {
  type ReactorKind as Kind,
  REACTION_RETENTION_SECONDS,
  type ReactorStore,
  type StoredReaction,
} from "#shared/ports/reactor-store.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { cancelledByCondition, isConditionalCheckFailed, transactOrFalse } from "./client.ts";
import { configurationAsRead } from "./configuration-condition.ts";
import { queryAll } from "./paging.ts";
import { epochSeconds } from "./schema.ts";

const reactorKeys = {
  formula: (tenantId: string, id: string) => ({ PK: `TENANT#${tenantId}`, SK: `FORMULA#${id}` }),
  reactor: (tenantId: string, id: string) => ({ PK: `TENANT#${tenantId}`, SK: `REACTOR#${id}` }),
  reaction: (tenantId: string, requestId: string) => ({
    PK: `REACTION#${tenantId}#${requestId}`,
    SK: "META",
  }),
  webhookSecret: (tenantId: string) => ({ PK: `TENANT#${tenantId}`, SK: "WEBHOOKSECRET" }),
};

const PREFIX: Record<Kind, string> = { formula: "FORMULA#", reactor: "REACTOR#" };

/** Formulas, reactors, stored reaction outcomes and the tenant's webhook secret (sealed). */
export class DynamoReactorStore implements ReactorStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  private key(kind: Kind, tenantId: string, id: string) {
    return kind === "formula" ? reactorKeys.formula(tenantId, id) : reactorKeys.reactor(tenantId, id);
  }

  async put<T extends StoredFormula | ReactorToStore>(
    kind: Kind,
    item: T,
    audit: LogEntry,
    mode: "create" | "replace",
  ) {
    return transactOrFalse(this.client, [
      {
        Put: {
          TableName: this.tableName,
          Item: { ...this.key(kind, item.tenant_id, item.id), entity: kind, ...item },
          ConditionExpression: mode === "create" ? "attribute_not_exists(PK)" : "attribute_exists(PK)",
        },
      },
      this.audit.put(audit),
    ]);
  }

  async get<T>(kind: Kind, tenantId: string, id: string): Promise<T | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(kind, tenantId, id), ConsistentRead: true }),
    );
    return out.Item ? stripKeys<T>(out.Item) : undefined;
  }

  async list<T>(kind: Kind, tenantId: string): Promise<T[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": PREFIX[kind] },
    });
    return items.map((item) => stripKeys<T>(item));
  }

  async resealConfiguration(reactor: StoredReactor, sealed: string, audit: LogEntry): Promise<boolean> {
    // As read: the sealed configuration, or the plain map of an older item (which this write removes).
    const asRead = configurationAsRead(reactor);
    return transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: reactorKeys.reactor(reactor.tenant_id, reactor.id),
          UpdateExpression: "SET sealed_configuration = :to REMOVE configuration",
          ConditionExpression: `attribute_exists(PK) AND ${asRead.condition}`,
          ExpressionAttributeValues: { ...asRead.values, ":to": sealed },
        },
      },
      this.audit.put(audit),
    ]);
  }

  async delete(kind: Kind, tenantId: string, id: string, audit: LogEntry): Promise<boolean> {
    return transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: this.key(kind, tenantId, id),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      this.audit.put(audit),
    ]);
  }

  /** A stored reaction outcome (sealed), so a redelivered job never runs the code again. */
  async reaction(tenantId: string, requestId: string): Promise<string | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: reactorKeys.reaction(tenantId, requestId),
        ConsistentRead: true,
      }),
    );
    return out.Item?.sealed_outcome as string | undefined;
  }

  async reactionRecord(tenantId: string, requestId: string): Promise<StoredReaction | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: reactorKeys.reaction(tenantId, requestId),
        ConsistentRead: true,
      }),
    );
    const item = out.Item;
    if (!item || typeof item.sealed_outcome !== "string") return undefined;
    return {
      sealedOutcome: item.sealed_outcome,
      ...(typeof item.reactor_id === "string" ? { reactorId: item.reactor_id } : {}),
      ...(typeof item.owner === "string" ? { owner: item.owner } : {}),
      ...(typeof item.stored_at === "string" ? { storedAt: item.stored_at } : {}),
    };
  }

  /** Stores an outcome once; returns the stored one (a concurrent run may have stored first). */
  async storeReaction(
    tenantId: string,
    requestId: string,
    sealedOutcome: string,
    now: Date,
    about: { reactorId: string; owner?: string },
  ): Promise<string> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...reactorKeys.reaction(tenantId, requestId),
            entity: "reaction",
            sealed_outcome: sealedOutcome,
            reactor_id: about.reactorId,
            ...(about.owner ? { owner: about.owner } : {}),
            stored_at: now.toISOString(),
            // DynamoDB's TTL deletes within about two days; reads check stored_at against the clock too.
            ttl: epochSeconds(now) + REACTION_RETENTION_SECONDS,
          },
          ConditionExpression: "attribute_not_exists(PK)",
        }),
      );
      return sealedOutcome;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return (await this.reaction(tenantId, requestId)) ?? sealedOutcome;
    }
  }

  async webhookSecret(tenantId: string): Promise<string | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: reactorKeys.webhookSecret(tenantId),
        ConsistentRead: true,
      }),
    );
    return out.Item?.sealed_secret as string | undefined;
  }

  /** Sets the sealed secret; with `onlyIfAbsent`, keeps an existing one and returns it. */
  async putWebhookSecret(
    tenantId: string,
    sealed: string,
    options: { onlyIfAbsent: boolean },
    audit?: LogEntry,
  ) {
    const put = {
      TableName: this.tableName,
      Item: { ...reactorKeys.webhookSecret(tenantId), entity: "webhook_secret", sealed_secret: sealed },
      ...(options.onlyIfAbsent ? { ConditionExpression: "attribute_not_exists(PK)" } : {}),
    };
    try {
      if (audit)
        await this.client.send(
          new TransactWriteCommand({ TransactItems: [{ Put: put }, this.audit.put(audit)] }),
        );
      else await this.client.send(new PutCommand(put));
      return sealed;
    } catch (error) {
      if (!(isConditionalCheckFailed(error) || cancelledByCondition(error))) throw error;
      return (await this.webhookSecret(tenantId)) ?? sealed;
    }
  }

  async resealWebhookSecret(tenantId: string, from: string, to: string, audit: LogEntry): Promise<boolean> {
    return transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: reactorKeys.webhookSecret(tenantId),
          UpdateExpression: "SET sealed_secret = :to",
          ConditionExpression: "sealed_secret = :from",
          ExpressionAttributeValues: { ":from": from, ":to": to },
        },
      },
      this.audit.put(audit),
    ]);
  }
}
