import { createHmac, timingSafeEqual } from "node:crypto";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionalCheckFailed } from "#shared/adapters/dynamodb/client.ts";
import { keys } from "#shared/adapters/dynamodb/schema.ts";
import { createMasterKey, MasterKeyWrapper, readMasterKey } from "./master-key-wrapper.ts";

/**
 * The key check value: an HMAC of a fixed label under the master key. It tells whether a key is the one the
 * data was sealed under without revealing anything of the key (unlike a wrapped test value, it opens nothing).
 */
export function keyCheckValue(masterKey: Buffer): string {
  return createHmac("sha256", masterKey)
    .update("svc-vault master key check value v1")
    .digest("hex")
    .slice(0, 32);
}

function sameCheck(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Refusal to start: names the key file (never the key), and what to do. */
export class MasterKeyMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MasterKeyMismatchError";
  }
}

export interface OpenMasterKeyOptions {
  file: string;
  dynamo: DynamoDBDocumentClient;
  tableName: string;
}

/**
 * The local master key for this table, checked against the data before the service answers anything:
 * - the table holds a key check value: the file must hold the key it was made from, else refuse;
 * - no check value yet (a new table, or data from before issue 17): a wrapped data key in the table must unwrap
 *   with the file's key, else refuse; a key is created only when the table holds no sealed data at all;
 * then the check value is stored beside the data (in the table, so every backup of the data carries it).
 */
export async function openMasterKey({ file, dynamo, tableName }: OpenMasterKeyOptions): Promise<Buffer> {
  const stored = await storedCheck(dynamo, tableName);
  let key = readMasterKey(file);
  if (stored !== undefined) {
    if (!key)
      throw new MasterKeyMismatchError(
        `The data in table ${tableName} is sealed under a master key, and there is none at ${file}. ` +
          "Restore that file from the backup of this data (or name it with SVC_MASTER_KEY_FILE); " +
          "a new key could not open anything stored.",
      );
    if (!sameCheck(keyCheckValue(key), stored))
      throw new MasterKeyMismatchError(
        `The master key at ${file} is not the one the data in table ${tableName} was sealed under ` +
          "(its key check value differs). Restore the matching key file, or name it with SVC_MASTER_KEY_FILE.",
      );
    return key;
  }
  const sealed = await anyWrappedDataKey(dynamo, tableName);
  if (sealed) {
    if (!key)
      throw new MasterKeyMismatchError(
        `The data in table ${tableName} holds sealed data keys, and there is no master key at ${file}. ` +
          "Restore that file from the backup of this data (or name it with SVC_MASTER_KEY_FILE).",
      );
    const opens = await new MasterKeyWrapper(key).unwrap(sealed.wrapped, sealed.context).then(
      () => true,
      () => false,
    );
    if (!opens)
      throw new MasterKeyMismatchError(
        `The master key at ${file} does not open the data in table ${tableName}. ` +
          "Restore the matching key file, or name it with SVC_MASTER_KEY_FILE.",
      );
  }
  key ??= createMasterKey(file);
  await storeCheck(dynamo, tableName, keyCheckValue(key));
  return key;
}

async function storedCheck(dynamo: DynamoDBDocumentClient, tableName: string): Promise<string | undefined> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName, Key: keys.masterKeyCheck, ConsistentRead: true }),
  );
  return typeof out.Item?.check === "string" ? out.Item.check : undefined;
}

async function storeCheck(dynamo: DynamoDBDocumentClient, tableName: string, check: string): Promise<void> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...keys.masterKeyCheck, entity: "master_key_check", check },
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    // Another process stored one first: it must be the same key's.
    const stored = await storedCheck(dynamo, tableName);
    if (stored === undefined || !sameCheck(stored, check))
      throw new MasterKeyMismatchError(
        `Another process stored a different master key's check value in table ${tableName}.`,
      );
  }
}

/** One wrapped data key of the table, with the context it was wrapped under (data_key items, keyring.ts). */
async function anyWrappedDataKey(
  dynamo: DynamoDBDocumentClient,
  tableName: string,
): Promise<{ wrapped: Buffer; context: Record<string, string> } | undefined> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: "#entity = :dataKey",
        ExpressionAttributeNames: { "#entity": "entity" },
        ExpressionAttributeValues: { ":dataKey": "data_key" },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      const tenant = /^TENANT#(.+)$/.exec(String(item.PK))?.[1];
      const keyId = /^DATAKEY#(.+)$/.exec(String(item.SK))?.[1];
      if (tenant && keyId && typeof item.wrapped === "string")
        return {
          wrapped: Buffer.from(item.wrapped, "base64"),
          context: { tenant_id: tenant, key_id: keyId },
        };
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return undefined;
}
