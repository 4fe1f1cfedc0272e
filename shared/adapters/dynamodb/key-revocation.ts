import { type DynamoDBDocumentClient, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { OWN_TRANSACT_ITEMS } from "./limits.ts";
import { keys } from "./schema.ts";

/** An application key as stored: its listing under the tenant (`PK`/`SK`) and the hash its lookup is kept by. */
export type RevokedKey = { listing: { PK: string; SK: string }; hash: string };

/**
 * The deletes that revoke `revoked` (each key's listing and lookup), for a write that has room for `room` of
 * them: those beyond it are deleted first, in writes of their own. A failure part-way leaves the holder (the
 * application or member whose write comes last) in place, with fewer keys, so deleting it again goes on; a
 * holder is never gone while a key of its stays.
 */
export async function revokeBeyond(
  client: DynamoDBDocumentClient,
  tableName: string,
  revoked: RevokedKey[],
  room: number,
) {
  const deletes = (key: RevokedKey) => [
    { Delete: { TableName: tableName, Key: key.listing } },
    { Delete: { TableName: tableName, Key: keys.apiKey(key.hash) } },
  ];
  const perWrite = Math.floor(OWN_TRANSACT_ITEMS / 2);
  const early = revoked.slice(Math.max(0, room));
  for (let i = 0; i < early.length; i += perWrite)
    await client.send(
      new TransactWriteCommand({ TransactItems: early.slice(i, i + perWrite).flatMap(deletes) }),
    );
  return revoked.slice(0, Math.max(0, room)).flatMap(deletes);
}
