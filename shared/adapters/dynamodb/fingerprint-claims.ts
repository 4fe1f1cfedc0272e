import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { ignoreConditionFailed } from "./client.ts";
import { tokenKeys } from "./token-keys.ts";

/** The item that says which token holds a value's fingerprint (what deduplicating creates look up). */
export function fingerprintClaimItem(fingerprintKey: { PK: string; SK: string }, tokenId: string) {
  return { ...fingerprintKey, entity: "fingerprint", token_id: tokenId };
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
    .catch(ignoreConditionFailed);
}

/** Claims a fingerprint for this token only if nobody holds it (best effort, never fails on a taken claim). */
export async function claimIfUnclaimed(
  client: DynamoDBDocumentClient,
  tableName: string,
  fingerprintKey: { PK: string; SK: string },
  tokenId: string,
): Promise<void> {
  await client
    .send(
      new PutCommand({
        TableName: tableName,
        Item: fingerprintClaimItem(fingerprintKey, tokenId),
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    )
    .catch(ignoreConditionFailed);
}
