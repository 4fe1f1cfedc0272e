import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { cancellationCodes } from "#shared/aws-errors.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { answerKeyId, dataVersionOf, keySetKeys } from "#shared/domain/keys/key-refs.ts";
import {
  type DestroyOutcome,
  INITIAL_KEY_STATE,
  type KeyState,
  type KeyVersionRecord,
  type KeyVersionStore,
} from "#shared/ports/key-versions.ts";
import type { AuditItems } from "./audit-items.ts";
import { KEY_COUNT_SHARDS, keyCountKeys } from "./key-counters.ts";
import { queryAll } from "./paging.ts";

const stateKey = (tenantId: string) => ({ PK: `TENANT#${tenantId}`, SK: "KEYSTATE" });
const dataKeyKey = (tenantId: string, keyId: string) => ({
  PK: `TENANT#${tenantId}`,
  SK: `DATAKEY#${keyId}`,
});

/** Tries of a destruction whose counters moved between the read and the write. */
const DESTROY_ATTEMPTS = 3;

/**
 * The tenant's key versions: its state item, one item per key version (when made, whether counted from the start,
 * when destroyed) and the sharded counters (key-counters.ts), all under the tenant's partition: a listing is a
 * few Queries of one partition, whatever the tenant's size.
 */
export class DynamoKeyVersionStore implements KeyVersionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  async state(tenantId: string): Promise<KeyState> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: stateKey(tenantId), ConsistentRead: true }),
    );
    if (!out.Item) return INITIAL_KEY_STATE;
    return {
      ...(typeof out.Item.data_version === "number" ? { dataVersion: out.Item.data_version } : {}),
      ...(typeof out.Item.rotated_in_period === "number"
        ? { rotatedInPeriod: out.Item.rotated_in_period }
        : {}),
      hmacVersion: Number(out.Item.hmac_version),
      hmacLive: (out.Item.hmac_live as number[]).map(Number),
      revision: Number(out.Item.revision),
    };
  }

  private trackUpdate(tenantId: string, keyId: string, now: Date) {
    return {
      TableName: this.tableName,
      Key: keyCountKeys.version(tenantId, keyId),
      UpdateExpression:
        "SET entity = :entity, key_id = :id, tracked = :yes, created_at = if_not_exists(created_at, :now)",
      ExpressionAttributeValues: {
        ":entity": "key_version",
        ":id": keyId,
        ":yes": true,
        ":now": now.toISOString(),
      },
    };
  }

  async track(tenantId: string, keyId: string, now: Date): Promise<void> {
    await this.client.send(new UpdateCommand(this.trackUpdate(tenantId, keyId, now)));
  }

  private statePut(tenantId: string, from: KeyState, to: KeyState) {
    return {
      Put: {
        TableName: this.tableName,
        Item: {
          ...stateKey(tenantId),
          entity: "key_state",
          ...(to.dataVersion !== undefined ? { data_version: to.dataVersion } : {}),
          ...(to.rotatedInPeriod !== undefined ? { rotated_in_period: to.rotatedInPeriod } : {}),
          hmac_version: to.hmacVersion,
          hmac_live: to.hmacLive,
          revision: to.revision,
        },
        ConditionExpression: from.revision === 0 ? "attribute_not_exists(PK)" : "revision = :revision",
        ...(from.revision === 0 ? {} : { ExpressionAttributeValues: { ":revision": from.revision } }),
      },
    };
  }

  async rotate(
    tenantId: string,
    from: KeyState,
    to: KeyState,
    newKeys: string[],
    audit: LogEntry,
    now: Date,
  ) {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            this.statePut(tenantId, from, to),
            ...newKeys.map((keyId) => ({ Update: this.trackUpdate(tenantId, keyId, now) })),
            this.audit.put(audit),
          ],
        }),
      );
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === "ConditionalCheckFailed") return false;
      throw error;
    }
  }

  async versions(tenantId: string): Promise<KeyVersionRecord[]> {
    const partition = (prefix: string) =>
      queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": prefix },
        ConsistentRead: true,
      });
    const [keys, versions, counters] = await Promise.all([
      partition("DATAKEY#"),
      partition("KEYVER#"),
      partition("KEYUSE#"),
    ]);
    const records = new Map<string, KeyVersionRecord>();
    const record = (keyId: string) => {
      let found = records.get(keyId);
      if (!found) {
        found = { keyId, tracked: false, tokens: 0 };
        records.set(keyId, found);
      }
      return found;
    };
    for (const item of keys) {
      const r = record(String(item.SK).slice("DATAKEY#".length));
      if (typeof item.created_at === "string") r.createdAt ??= item.created_at;
    }
    for (const item of versions) {
      const r = record(String(item.key_id));
      r.tracked = item.tracked === true;
      if (typeof item.created_at === "string") r.createdAt = item.created_at;
      if (typeof item.destroyed_at === "string") r.destroyedAt = item.destroyed_at;
    }
    // A counter item counts a key set: each key of the set needs its tokens.
    for (const item of counters)
      for (const keyId of keySetKeys(String(item.key_id))) record(keyId).tokens += Number(item.tokens ?? 0);
    return [...records.values()];
  }

  async destroy(
    tenantId: string,
    keyId: string,
    audit: LogEntry,
    now: Date,
    state?: { from: KeyState; to: KeyState },
  ): Promise<DestroyOutcome> {
    for (let attempt = 0; attempt < DESTROY_ATTEMPTS; attempt++) {
      const [version, counters] = await Promise.all([
        this.client.send(
          new GetCommand({
            TableName: this.tableName,
            Key: keyCountKeys.version(tenantId, keyId),
            ConsistentRead: true,
          }),
        ),
        queryAll(this.client, {
          TableName: this.tableName,
          KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
          ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": "KEYUSE#" },
          ConsistentRead: true,
        }),
      ]);
      // The counters of every key set that names the key (a few: its data key beside one or two HMAC versions).
      const shards = counters.filter((item) => keySetKeys(String(item.key_id)).includes(keyId));
      const sets = [...new Set([keyId, ...shards.map((item) => String(item.key_id))])];
      if (!version.Item) return "not-found";
      if (version.Item.destroyed_at) return "not-found";
      if (version.Item.tracked !== true) return "uncounted";
      const seen = new Map(shards.map((item) => [String(item.SK), Number(item.tokens ?? 0)]));
      if ([...seen.values()].reduce((a, b) => a + b, 0) !== 0) return "in-use";
      // Every shard of those sets as read (their sum is 0), and marked: from here no write can count a token under
      // the key through them.
      const shardWrites = sets
        .flatMap((set) => Array.from({ length: KEY_COUNT_SHARDS }, (_, shard) => ({ set, shard })))
        .map(({ set, shard }) => {
          const Key = keyCountKeys.shard(tenantId, set, shard);
          const tokens = seen.get(Key.SK);
          return {
            Update: {
              TableName: this.tableName,
              Key,
              UpdateExpression: "SET destroyed_at = :now, entity = :entity, key_id = :id",
              ConditionExpression:
                tokens === undefined ? "attribute_not_exists(#tokens)" : "#tokens = :tokens",
              ExpressionAttributeNames: { "#tokens": "tokens" },
              ExpressionAttributeValues: {
                ":now": now.toISOString(),
                ":entity": "key_use",
                ":id": set,
                ...(tokens === undefined ? {} : { ":tokens": tokens }),
              },
            },
          };
        });
      try {
        await this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.tableName,
                  Key: keyCountKeys.version(tenantId, keyId),
                  UpdateExpression: "SET destroyed_at = :now",
                  ConditionExpression: "tracked = :yes AND attribute_not_exists(destroyed_at)",
                  ExpressionAttributeValues: { ":now": now.toISOString(), ":yes": true },
                },
              },
              ...(state ? [this.statePut(tenantId, state.from, state.to)] : []),
              { Delete: { TableName: this.tableName, Key: dataKeyKey(tenantId, keyId) } },
              // A data-key version's answer key (idempotent answers sealed beside it, outlived by the destroy
              // window) goes with it: else it stayed for good, opening every copy of those answers.
              ...(dataVersionOf(keyId) === undefined
                ? []
                : [{ Delete: { TableName: this.tableName, Key: dataKeyKey(tenantId, answerKeyId(keyId)) } }]),
              ...shardWrites,
              this.audit.put(audit),
            ] as never,
          }),
        );
        return "destroyed";
      } catch (error) {
        const reasons = cancellationCodes(error);
        if (!reasons) throw error;
        if (reasons[0] === "ConditionalCheckFailed") return "not-found";
        if (state && reasons[1] === "ConditionalCheckFailed") return "changed";
        if (!reasons.includes("ConditionalCheckFailed")) throw error;
        // A counter moved since the read: read again.
      }
    }
    return "in-use";
  }
}
