import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { SessionStore, StoredSession } from "#shared/ports/session-store.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { epochSeconds, keys } from "./schema.ts";
import { sweepEntryPut } from "./sweep-index.ts";

export const sessionKeys = {
  session: (tenantId: string, id: string) => ({ PK: `SESSION#${tenantId}#${id}`, SK: "META" }),
  nonce: (nonceHash: string) => ({ PK: `NONCE#${nonceHash}`, SK: "META" }),
} as const;

const STORE_ONLY = ["expires_epoch", "key_hash", "nonce_hash"] as const;

/**
 * A session is three items written together: the session, its key lookup (APIKEY#<hash>, kind session) and its
 * nonce (NONCE#<hash>). All carry the TTL of the session's expiry; the sweep deletes them once it has passed.
 */
export class DynamoSessionStore implements SessionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
  ) {}

  private sweepEntry(session: StoredSession) {
    return sweepEntryPut(this.tableName, {
      kind: "S",
      tenantId: session.tenant_id,
      entityId: session.id,
      dueAt: session.expires_at,
    });
  }

  /** A conditional Put of a new item: a session's items are never overwritten. */
  private putNew(item: Record<string, unknown>) {
    return {
      Put: { TableName: this.tableName, Item: item, ConditionExpression: "attribute_not_exists(PK)" },
    };
  }

  /** The session and its key lookup; `nonceHash` "none" for a session authorized at creation (no nonce). */
  private sessionAndKey(session: StoredSession, keyHash: string, nonceHash: string) {
    const ttl = epochSeconds(new Date(session.expires_at));
    return [
      this.putNew({
        ...sessionKeys.session(session.tenant_id, session.id),
        entity: "session",
        ...session,
        key_hash: keyHash,
        nonce_hash: nonceHash,
        expires_epoch: ttl,
        ttl,
      }),
      this.putNew({
        ...keys.apiKey(keyHash),
        entity: "api_key",
        kind: "session",
        tenant_id: session.tenant_id,
        application_id: session.created_by,
        key_id: session.id,
        session_id: session.id,
        ttl,
      }),
    ];
  }

  async create(session: StoredSession, keyHash: string, nonceHash: string, audit: LogEntry): Promise<void> {
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          ...this.sessionAndKey(session, keyHash, nonceHash),
          this.putNew({
            ...sessionKeys.nonce(nonceHash),
            entity: "nonce",
            tenant_id: session.tenant_id,
            session_id: session.id,
            ttl: epochSeconds(new Date(session.expires_at)),
          }),
          this.sweepEntry(session),
          this.audit.put(audit),
        ],
      }),
    );
  }

  async createAuthorized(session: StoredSession, keyHash: string, audit: LogEntry): Promise<void> {
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          ...this.sessionAndKey(session, keyHash, "none"),
          this.sweepEntry(session),
          this.audit.put(audit),
        ],
      }),
    );
  }

  async get(tenantId: string, id: string): Promise<StoredSession | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: sessionKeys.session(tenantId, id),
        ConsistentRead: true,
      }),
    );
    if (!out.Item) return undefined;
    return stripKeys<StoredSession>(out.Item, STORE_ONLY);
  }

  async findByNonce(nonceHash: string) {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: sessionKeys.nonce(nonceHash), ConsistentRead: true }),
    );
    return out.Item
      ? { tenantId: String(out.Item.tenant_id), sessionId: String(out.Item.session_id) }
      : undefined;
  }

  async authorize(session: StoredSession, now: Date, audit: LogEntry) {
    const expiresEpoch = epochSeconds(new Date(session.expires_at));
    // The key lookup (what every authentication reads first) carries the session's TTL too: authorizing may move
    // expires_at up to 24 h on, and a lookup left at the 3-minute default would be deleted by DynamoDB TTL first.
    const stored = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: sessionKeys.session(session.tenant_id, session.id),
        ConsistentRead: true,
        ProjectionExpression: "key_hash",
      }),
    );
    if (typeof stored.Item?.key_hash !== "string") return "expired" as const;
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.apiKey(stored.Item.key_hash),
                UpdateExpression: "SET #ttl = :expiresEpoch",
                ConditionExpression: "attribute_exists(PK) AND session_id = :sessionId",
                ExpressionAttributeNames: { "#ttl": "ttl" },
                ExpressionAttributeValues: { ":expiresEpoch": expiresEpoch, ":sessionId": session.id },
              },
            },
            {
              Update: {
                TableName: this.tableName,
                Key: sessionKeys.session(session.tenant_id, session.id),
                UpdateExpression: `SET #state = :authorized, authorized_by = :by, ${session.authorized_key_id ? "authorized_key_id = :keyId, " : ""}authorized_at = :at, #permissions = :permissions, #rules = :rules, expires_at = :expiresAt, expires_epoch = :expiresEpoch, #ttl = :expiresEpoch`,
                ConditionExpression: "#state = :created AND expires_epoch > :now",
                ExpressionAttributeNames: {
                  "#state": "state",
                  "#permissions": "permissions",
                  "#rules": "rules",
                  "#ttl": "ttl",
                },
                ExpressionAttributeValues: {
                  ":authorized": "authorized",
                  ":created": "created",
                  ":by": session.authorized_by,
                  ...(session.authorized_key_id ? { ":keyId": session.authorized_key_id } : {}),
                  ":at": session.authorized_at,
                  ":permissions": session.permissions ?? [],
                  ":rules": session.rules ?? [],
                  ":expiresAt": session.expires_at,
                  ":expiresEpoch": expiresEpoch,
                  ":now": epochSeconds(now),
                },
              },
            },
            this.sweepEntry(session),
            this.audit.put(audit),
          ],
        }),
      );
      return "ok" as const;
    } catch (error) {
      if (!(error instanceof Error) || error.name !== "TransactionCanceledException") throw error;
      const current = await this.get(session.tenant_id, session.id);
      return current?.state === "authorized" ? ("not-created" as const) : ("expired" as const);
    }
  }

  /** Removes an expired session's items (the sweep); false when it is gone or was extended. */
  async removeExpired(tenantId: string, id: string, now: Date): Promise<boolean> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: sessionKeys.session(tenantId, id),
        ConsistentRead: true,
      }),
    );
    const item = out.Item;
    if (!item || Number(item.expires_epoch) > epochSeconds(now)) return false;
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Delete: {
              TableName: this.tableName,
              Key: sessionKeys.session(tenantId, id),
              ConditionExpression: "expires_epoch <= :now",
              ExpressionAttributeValues: { ":now": epochSeconds(now) },
            },
          },
          { Delete: { TableName: this.tableName, Key: keys.apiKey(String(item.key_hash)) } },
          { Delete: { TableName: this.tableName, Key: sessionKeys.nonce(String(item.nonce_hash)) } },
        ],
      }),
    );
    return true;
  }
}
