import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conflict } from "#shared/domain/errors.ts";
import { ignoreConditionFailed, transactOrFalse } from "./client.ts";
import { OWN_TRANSACT_ITEMS } from "./limits.ts";
import { DELETION_STARTED, keys } from "./schema.ts";

/**
 * An application key as stored: its listing under the tenant (`PK`/`SK`), the hash its lookup is kept by, and the
 * audit entry item that logs its revocation (written with its deletes).
 */
export type RevokedKey = {
  listing: { PK: string; SK: string };
  hash: string;
  entry: Record<string, unknown>;
};

/** The items one key's revocation writes: its listing's and lookup's deletes, and its audit entry. */
export const ITEMS_PER_REVOKED_KEY = 3;

/**
 * The deletes that revoke `revoked` (each key's listing and lookup, with its audit entry), for a write that has room for `room` of
 * them: those beyond it are deleted first, in writes of their own. A failure part-way leaves the holder (the
 * application or member whose write comes last) in place, with fewer keys, so deleting it again goes on; a
 * holder is never gone while a key of its stays. Each listing's delete is conditional on the key still being
 * there: a key revoked on its own since it was listed (its own `delete` entry written) would be logged twice.
 * Undefined when a write was refused for that: the caller lists again (`untilRevoked`).
 */
export async function revokeBeyond(
  client: DynamoDBDocumentClient,
  tableName: string,
  revoked: RevokedKey[],
  room: number,
) {
  const deletes = (key: RevokedKey) => [
    { Delete: { TableName: tableName, Key: key.listing, ConditionExpression: "attribute_exists(PK)" } },
    { Delete: { TableName: tableName, Key: keys.apiKey(key.hash) } },
    key.entry,
  ];
  const perWrite = Math.floor(OWN_TRANSACT_ITEMS / ITEMS_PER_REVOKED_KEY);
  const early = revoked.slice(Math.max(0, room));
  for (let i = 0; i < early.length; i += perWrite)
    if (!(await transactOrFalse(client, early.slice(i, i + perWrite).flatMap(deletes)))) return undefined;
  return revoked.slice(0, Math.max(0, room)).flatMap(deletes);
}

/**
 * Marks a key holder (a member, an application) as being deleted, before its keys are listed: every mint through or
 * into it is conditional on the mark's absence (`whileNotDeleting`), so the listing cannot be outrun. Before, each
 * key added during the deletion made it list again, and a holder whose key added keys in a loop kept its own
 * deletion failing (review s52-a). A deletion that fails part-way leaves the mark; deleting again finishes.
 * `extra`: a further condition (a member that is no OWNER); a holder gone, or refused by it, is not marked.
 */
export async function markDeletionStarted(
  client: DynamoDBDocumentClient,
  tableName: string,
  key: { PK: string; SK: string },
  extra?: { condition: string; names: Record<string, string>; values: Record<string, unknown> },
): Promise<void> {
  await client
    .send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: "SET #fence = :true",
        ConditionExpression: `attribute_exists(PK)${extra ? ` AND ${extra.condition}` : ""}`,
        ExpressionAttributeNames: { "#fence": DELETION_STARTED, ...extra?.names },
        ExpressionAttributeValues: { ":true": true, ...extra?.values },
      }),
    )
    .catch(ignoreConditionFailed);
}

/** The condition check of a write that mints through or into `key`'s holder: it exists, and is not being deleted. */
export function whileNotDeleting(tableName: string, key: { PK: string; SK: string }) {
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: key,
      ConditionExpression: "attribute_exists(PK) AND attribute_not_exists(#fence)",
      ExpressionAttributeNames: { "#fence": DELETION_STARTED },
    },
  };
}

/** How often a deletion lists its keys again when its listing did not shrink since the last. */
const REVOCATION_ATTEMPTS = 5;

/** An attempt refused by a key that changed since it was listed; `listed`: how many keys it had listed. */
export class KeysChanged {
  constructor(readonly listed: number) {}
}

/**
 * Runs one deletion that revokes keys (`attempt`: listed, then written) until it is not refused by a key that
 * changed since it was listed (`KeysChanged` asks for another listing). Each attempt reads its holder afresh, so a
 * holder deleted meanwhile ends it as not found.
 * Once the holder is marked no key is added to it, so its keys only go: a listing shorter than the last is
 * progress (a key was revoked on its own meanwhile), and the keys run out. Only a listing that did not shrink
 * counts towards the limit. Before, a member that revoked one of its own listed keys after each listing kept its
 * deletion failing (409 after five) for as many keys as it had made beforehand (review s53).
 */
export async function untilRevoked<T>(attempt: () => Promise<T | KeysChanged>, holder: string): Promise<T> {
  let stalled = 0;
  let last = Number.POSITIVE_INFINITY;
  for (;;) {
    const outcome = await attempt();
    if (!(outcome instanceof KeysChanged)) return outcome;
    if (outcome.listed >= last && ++stalled >= REVOCATION_ATTEMPTS)
      throw conflict(`${holder}'s keys are changing while it is being deleted; retry.`);
    last = outcome.listed;
  }
}

/** A key-addition count (an application's or a member's serial item) as read, `undefined` when there is none yet. */
export async function serialCount(
  client: DynamoDBDocumentClient,
  tableName: string,
  key: { PK: string; SK: string },
): Promise<number | undefined> {
  const out = await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return out.Item?.count as number | undefined;
}

/**
 * The condition that a serial item is still at the count read (absent when none was): a write under it refuses
 * once a key was added since.
 */
export function atSerialCount(count: number | undefined) {
  return count === undefined
    ? { ConditionExpression: "attribute_not_exists(PK)" }
    : {
        ConditionExpression: "#count = :count",
        ExpressionAttributeNames: { "#count": "count" },
        ExpressionAttributeValues: { ":count": count },
      };
}

/**
 * The delete of a serial item, only at the count read before the keys were listed: a key added since (the count
 * moved) refuses the holder's deletion, which lists again, so no key outlives its holder (a key minted while its
 * member was being deleted stayed listed, created and never revoked: stop 50's review).
 */
export function serialDelete(tableName: string, key: { PK: string; SK: string }, count: number | undefined) {
  return { Delete: { TableName: tableName, Key: key, ...atSerialCount(count) } };
}
