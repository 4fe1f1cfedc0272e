import type { TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { conflict } from "#shared/domain/errors.ts";
import {
  currentIdempotencyClaim,
  type EffectRef,
  type IdempotencyClaimRef,
} from "#shared/domain/idempotency-scope.ts";
import { keys } from "./schema.ts";

type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** Items each write transaction of an idempotent request gives to its effect record. */
export const EFFECT_RECORD_ITEMS = 1;

/** The audit entries among a transaction's puts (every effect writes its own: audit-items.ts). */
function effectsOf(items: TransactItem[]): EffectRef[] {
  return items.flatMap((item) => {
    const entry = item.Put?.Item;
    if (!entry || entry.entity !== undefined) return [];
    const { entity_type, entity_id, operation, created_at } = entry;
    return typeof entity_type === "string" && typeof entity_id === "string" && typeof operation === "string"
      ? [{ entity_type, entity_id, operation, ...(typeof created_at === "string" ? { at: created_at } : {}) }]
      : [];
  });
}

/** The one tenant the transaction's audit entries name, if they name exactly one. */
function tenantOf(items: TransactItem[]): string | undefined {
  const named = new Set(
    items.flatMap((item) => {
      const entry = item.Put?.Item;
      return entry && entry.entity === undefined && typeof entry.tenant_id === "string"
        ? [entry.tenant_id]
        : [];
    }),
  );
  return named.size === 1 ? [...named][0] : undefined;
}

function tableOf(items: TransactItem[]): string | undefined {
  const first = items[0];
  return (
    first?.Put?.TableName ??
    first?.Update?.TableName ??
    first?.Delete?.TableName ??
    first?.ConditionCheck?.TableName
  );
}

/**
 * The item that makes a write transaction of an idempotent request also record its effect on the request's
 * idempotency record: the effect and the record commit together or not at all, so a retry after any crash finds
 * the effect recorded and replays it (never runs it twice). The condition is the claim: a request whose claim
 * lapsed and was taken by a retry can no longer take effect.
 */
export function effectRecordItem(
  table: string,
  claim: IdempotencyClaimRef,
  effects: EffectRef[],
  tenantId?: string,
): TransactItem {
  // A record outside every tenant's partitions (root's POST /tenants, an anonymous invitation accept: its answer
  // names the tenant and its members) carries the tenant it acted on, so that tenant's purge removes it with the
  // rest (tenant-purge-store.ts matches tenant_id): it stayed, sealed, up to 24 h past the purge before 28 Nov 2026.
  const tag = tenantId !== undefined && !claim.scope.startsWith("tenant:");
  return {
    Update: {
      TableName: table,
      Key: keys.idempotency(claim.scope, claim.key),
      UpdateExpression: `SET #state = :effected, effects = list_append(if_not_exists(effects, :none), :effects)${
        tag ? ", tenant_id = :tenant" : ""
      }`,
      ConditionExpression: "claim_id = :claim AND #state IN (:inFlight, :effected)",
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: {
        ":effected": "effected",
        ":inFlight": "in_flight",
        ":claim": claim.claimId,
        ":none": [],
        ":effects": effects,
        ...(tag ? { ":tenant": tenantId } : {}),
      },
    },
  };
}

type Send<T> = (input: TransactWriteCommandInput) => Promise<T>;

/**
 * Sends a write transaction, with the effect record of the request's idempotency claim when it has one (the
 * DynamoDB client runs every TransactWriteItems through this: client.ts). A transaction cancelled by that record's
 * condition is a lost claim, answered 409 (never mistaken for the write's own conditions).
 */
export async function withEffectRecord<T>(input: TransactWriteCommandInput, send: Send<T>): Promise<T> {
  const claim = currentIdempotencyClaim();
  const items = input.TransactItems ?? [];
  const table = tableOf(items);
  if (!claim || !table) return send(input);
  const effects = effectsOf(items);
  const recorded = [...items, effectRecordItem(table, claim, effects, tenantOf(items))];
  try {
    const sent = await send({ ...input, TransactItems: recorded });
    claim.effects.push(...effects);
    return sent;
  } catch (error) {
    const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    if (error instanceof Error && error.name === "TransactionCanceledException")
      if (reasons?.[items.length]?.Code === "ConditionalCheckFailed")
        throw conflict("A request with this idempotency key is still being processed.");
    throw error;
  }
}
