import { randomUUID } from "node:crypto";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Clock } from "#shared/ports/clock.ts";
import {
  IDEMPOTENCY_RETENTION_SECONDS,
  type IdempotencyClaim,
  type IdempotencyStore,
  type RecordedEffect,
  type StoredResponse,
} from "#shared/ports/stores.ts";
import { ignoreConditionFailed, isConditionalCheckFailed } from "./client.ts";
import { epochSeconds, keys } from "./schema.ts";

export { IDEMPOTENCY_RETENTION_SECONDS };
/**
 * An in-flight marker whose request died (a Lambda killed mid-request) frees its key after this lease,
 * longer than API Gateway's 30 s integration timeout, so no live request can still hold it.
 */
export const IN_FLIGHT_LEASE_SECONDS = 60;

export class DynamoIdempotencyStore implements IdempotencyStore {
  /** Epoch seconds after which no record kept under a key as sent can be left (hasLegacyRecord). */
  private legacyUntil: number | undefined;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock,
  ) {}

  async claim(
    scope: string,
    key: string,
    requestSignature: string,
    leaseSeconds = IN_FLIGHT_LEASE_SECONDS,
  ): Promise<IdempotencyClaim> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = epochSeconds(this.clock.now());
      const claimId = randomUUID();
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              ...keys.idempotency(scope, key),
              entity: "idempotency",
              state: "in_flight",
              claim_id: claimId,
              signature: requestSignature,
              lease_until: now + leaseSeconds,
              expires_at: now + IDEMPOTENCY_RETENTION_SECONDS,
              ttl: now + IDEMPOTENCY_RETENTION_SECONDS,
            },
            // A lapsed lease frees the key only if its request took no effect ("effected" is never taken again).
            ConditionExpression:
              "attribute_not_exists(PK) OR expires_at <= :now OR (#state = :inFlight AND lease_until <= :now)",
            ExpressionAttributeNames: { "#state": "state" },
            ExpressionAttributeValues: { ":now": now, ":inFlight": "in_flight" },
          }),
        );
        return { outcome: "claimed", claimId };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
      const existing = await this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: keys.idempotency(scope, key),
          ConsistentRead: true,
        }),
      );
      const item = existing.Item;
      if (!item) continue; // released between our write and read: try to claim again
      if (item.state === "completed")
        return {
          outcome: "completed",
          response: item.response as StoredResponse,
          requestSignature: String(item.signature),
        };
      if (item.state === "effected" && Number(item.lease_until ?? 0) <= now)
        return {
          outcome: "effected",
          effects: (item.effects ?? []) as RecordedEffect[],
          requestSignature: String(item.signature),
        };
      return { outcome: "in-flight" };
    }
    return { outcome: "in-flight" };
  }

  async hasLegacyRecord(scope: string, sentKey: string): Promise<boolean> {
    const now = epochSeconds(this.clock.now());
    this.legacyUntil ??= (await this.keyedSince(now)) + IDEMPOTENCY_RETENTION_SECONDS;
    if (now >= this.legacyUntil) return false;
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.idempotency(scope, sentKey),
        ConsistentRead: true,
      }),
    );
    return out.Item !== undefined && Number(out.Item.expires_at) > now;
  }

  /** When this deployment first kept keys as digests: recorded once (the first to ask), read by every process. */
  private async keyedSince(now: number): Promise<number> {
    const read = async () =>
      (
        await this.client.send(
          new GetCommand({ TableName: this.tableName, Key: keys.idempotencyFormat, ConsistentRead: true }),
        )
      ).Item?.keyed_since as number | undefined;
    const recorded = await read();
    if (recorded !== undefined) return Number(recorded);
    // Only the first process writes it (a cold start after that reads, never a refused write).
    await this.client
      .send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...keys.idempotencyFormat, entity: "system", keyed_since: now },
          ConditionExpression: "attribute_not_exists(PK)",
        }),
      )
      .catch(ignoreConditionFailed);
    return Number((await read()) ?? now);
  }

  async complete(scope: string, key: string, claimId: string, response: StoredResponse): Promise<void> {
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.idempotency(scope, key),
          UpdateExpression: "SET #state = :completed, #response = :response REMOVE lease_until, effects",
          // Only the claim's own request completes it (one whose lease lapsed and was taken cannot).
          ConditionExpression: "claim_id = :claim",
          ExpressionAttributeNames: { "#state": "state", "#response": "response" },
          ExpressionAttributeValues: { ":completed": "completed", ":response": response, ":claim": claimId },
        }),
      )
      .catch(ignoreConditionFailed);
  }

  async release(
    scope: string,
    key: string,
    claimId: string,
    effectsStand: boolean,
    knownEffects: number,
  ): Promise<void> {
    const Key = keys.idempotency(scope, key);
    if (!effectsStand) {
      // Only a record holding no effect but those the request saw commit: a write transaction whose commit
      // answered an error (a timeout or reset after DynamoDB applied it) appended its effect all the same, and
      // freeing the key would run it again on the retry the 503 asks for.
      const freed = await this.client
        .send(
          new DeleteCommand({
            TableName: this.tableName,
            Key,
            ConditionExpression:
              "claim_id = :claim AND (#state = :inFlight OR (#state = :effected AND size(effects) = :known))",
            ExpressionAttributeNames: { "#state": "state" },
            ExpressionAttributeValues: {
              ":inFlight": "in_flight",
              ":effected": "effected",
              ":claim": claimId,
              ":known": knownEffects,
            },
          }),
        )
        .then(
          () => true,
          (error: unknown) => {
            ignoreConditionFailed(error);
            return false;
          },
        );
      if (freed) return;
    }
    // Took effect, then failed: the effect stays recorded and a retry replays it at once.
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          UpdateExpression: "SET lease_until = :now",
          ConditionExpression: "#state = :effected AND claim_id = :claim",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: {
            ":effected": "effected",
            ":claim": claimId,
            ":now": epochSeconds(this.clock.now()),
          },
        }),
      )
      .catch(ignoreConditionFailed);
  }
}
