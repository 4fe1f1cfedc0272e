import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { Application, ApplicationKey } from "#shared/domain/entities.ts";
import { conflict, forbidden, notFound, validationError } from "#shared/domain/errors.ts";
import type {
  ApplicationStore,
  PageRequest,
  RevocationAudit,
  StoredKey,
  StorePage,
} from "#shared/ports/stores.ts";
import { DynamoApplicationReader } from "./application-reader.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { transactOrFalse } from "./client.ts";
import {
  atSerialCount,
  ITEMS_PER_REVOKED_KEY,
  KeysChanged,
  markDeletionStarted,
  revokeBeyond,
  serialCount,
  serialDelete,
  untilRevoked,
  whileNotDeleting,
} from "./key-revocation.ts";
import { OWN_TRANSACT_ITEMS } from "./limits.ts";
import { countQuery, decodeCursor, encodeCursor, queryUpTo } from "./paging.ts";
import { DELETION_STARTED, keys } from "./schema.ts";

/** Keys per application are capped so deleting an application stays one transaction (≤ 100 items). */
export const MAX_KEYS_PER_APPLICATION = 20;
/** Key additions to one application retried after losing to another at the same moment. */
const KEY_ADDITION_ATTEMPTS = 5;
const MINTER_REMOVED = "The member whose credentials act here was removed.";

/** Applications and their keys, written (the lookups are DynamoApplicationReader's). */
export class DynamoApplicationStore extends DynamoApplicationReader implements ApplicationStore {
  constructor(
    client: DynamoDBDocumentClient,
    tableName: string,
    private readonly audit: AuditItems,
  ) {
    super(client, tableName);
  }

  /** The two items a key needs: the listing under its tenant and the lookup by hash. */
  keyPuts(key: StoredKey) {
    const listing = {
      ...keys.applicationKey(key.tenant_id, key.application_id, key.id),
      entity: "application_key",
      id: key.id,
      application_id: key.application_id,
      created_at: key.created_at,
      key_hash: key.key_hash,
      ...(key.minted_by ? { minted_by: key.minted_by } : {}),
      ...(key.minted_through ? { minted_through: key.minted_through } : {}),
      ...(key.minted_chain?.length ? { minted_chain: key.minted_chain } : {}),
    };
    const lookup = {
      ...keys.apiKey(key.key_hash),
      entity: "api_key",
      tenant_id: key.tenant_id,
      application_id: key.application_id,
      key_id: key.id,
    };
    return [
      { Put: { TableName: this.tableName, Item: listing, ConditionExpression: "attribute_not_exists(PK)" } },
      { Put: { TableName: this.tableName, Item: lookup, ConditionExpression: "attribute_not_exists(PK)" } },
    ];
  }

  applicationPut(application: Application) {
    return {
      Put: {
        TableName: this.tableName,
        Item: {
          ...keys.application(application.tenant_id, application.id),
          entity: "application",
          ...application,
        },
        ConditionExpression: "attribute_not_exists(PK)",
      },
    };
  }

  async create(application: Application, key: StoredKey | undefined, audit: LogEntry): Promise<void> {
    const { tenant_id: tenantId, minted_by: mintedBy } = application;
    const written = await transactOrFalse(this.client, [
      this.applicationPut(application),
      // Created through a member's credentials: only while that member exists and is not being deleted (ids are
      // new: nothing else fails).
      ...(mintedBy ? [whileNotDeleting(this.tableName, keys.member(tenantId, mintedBy))] : []),
      ...(key ? this.keyPuts(key) : []),
      this.audit.put(audit),
    ]);
    if (!written) throw forbidden(MINTER_REMOVED);
  }

  async list(tenantId: string, page: PageRequest): Promise<StorePage<Application>> {
    const after = page.start === undefined ? undefined : decodeCursor(page.start);
    if (page.start !== undefined && after === undefined)
      throw validationError("The start cursor is invalid.");
    const input = {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": "APP#" },
    };
    const offset = after ? 0 : (page.page - 1) * page.size;
    const [items, total] = await Promise.all([
      queryUpTo(
        this.client,
        after ? { ...input, ExclusiveStartKey: keys.application(tenantId, after) } : input,
        offset + page.size + 1,
      ),
      countQuery(this.client, input),
    ]);
    const pageItems = items
      .slice(offset, offset + page.size)
      .map((i) => stripKeys<Application>(i, [DELETION_STARTED]));
    const last = pageItems.at(-1);
    return {
      items: pageItems,
      total,
      ...(items.length > offset + page.size && last ? { next: encodeCursor(last.id) } : {}),
    };
  }

  async update(application: Application, audit: LogEntry): Promise<void> {
    const written = await transactOrFalse(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: keys.application(application.tenant_id, application.id),
          ConditionExpression: "attribute_exists(PK)",
          UpdateExpression:
            "SET #name = :name, #permissions = :permissions, #rules = :rules, #origins = :origins, #modified_by = :modified_by, #modified_at = :modified_at",
          ExpressionAttributeNames: {
            "#name": "name",
            "#permissions": "permissions",
            "#rules": "rules",
            "#origins": "allowed_origins",
            "#modified_by": "modified_by",
            "#modified_at": "modified_at",
          },
          ExpressionAttributeValues: {
            ":name": application.name,
            ":permissions": application.permissions,
            ":rules": application.rules,
            ":origins": application.allowed_origins ?? [],
            ":modified_by": application.modified_by ?? null,
            ":modified_at": application.modified_at,
          },
        },
      },
      this.audit.put(audit),
    ]);
    if (!written) throw notFound("The application");
  }

  private async storedKeys(tenantId: string, applicationId: string) {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": `APPKEY#${applicationId}#` },
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []) as (ApplicationKey & { key_hash: string })[];
  }

  async delete(
    tenantId: string,
    applicationId: string,
    audit: LogEntry,
    keyAudit: RevocationAudit,
  ): Promise<boolean> {
    // Marked first: from here no key is added to it, so the listing below is not outrun (key-revocation.ts).
    await markDeletionStarted(this.client, this.tableName, keys.application(tenantId, applicationId));
    return untilRevoked(() => this.deleteOnce(tenantId, applicationId, audit, keyAudit), "The application");
  }

  private async deleteOnce(
    tenantId: string,
    applicationId: string,
    audit: LogEntry,
    keyAudit: RevocationAudit,
  ): Promise<boolean | KeysChanged> {
    // The addition count first, the keys after: a key added between the two refuses the write (serialDelete).
    const serialKey = keys.applicationKeySerial(tenantId, applicationId);
    const count = await serialCount(this.client, this.tableName, serialKey);
    const stored = await this.storedKeys(tenantId, applicationId);
    // More keys than one write holds were left by concurrent additions before their limit held.
    const revoked = stored.map((key) => ({
      listing: keys.applicationKey(tenantId, applicationId, key.id),
      hash: key.key_hash,
      entry: this.audit.put(keyAudit({ id: key.id, applicationId })),
    }));
    const room = Math.floor((OWN_TRANSACT_ITEMS - 3) / ITEMS_PER_REVOKED_KEY);
    const keyDeletes = await revokeBeyond(this.client, this.tableName, revoked, room);
    const written =
      keyDeletes !== undefined &&
      (await transactOrFalse(this.client, [
        {
          Delete: {
            TableName: this.tableName,
            Key: keys.application(tenantId, applicationId),
            ConditionExpression: "attribute_exists(PK)",
          },
        },
        serialDelete(this.tableName, serialKey, count),
        ...keyDeletes,
        this.audit.put(audit),
      ]));
    if (written) return true;
    // Refused: the application gone (not found), or a key of it revoked on its own or added since it was listed.
    return (await this.itemExists(keys.application(tenantId, applicationId)))
      ? new KeysChanged(revoked.length)
      : false;
  }

  /**
   * Adds a key within the limit. Additions to one application run one at a time: each is conditional on the
   * application's addition count it read before counting the keys, so of concurrent additions one writes and the
   * others count again. A key minted by a member is written only while that member exists.
   */
  async addKey(key: StoredKey, audit: LogEntry): Promise<void> {
    const serialKey = keys.applicationKeySerial(key.tenant_id, key.application_id);
    for (let attempt = 0; attempt < KEY_ADDITION_ATTEMPTS; attempt++) {
      // The count first, the keys after: an addition committed between the two reads fails this one's condition.
      const count = await serialCount(this.client, this.tableName, serialKey);
      const existing = await this.storedKeys(key.tenant_id, key.application_id);
      if (existing.length >= MAX_KEYS_PER_APPLICATION)
        throw validationError(
          `An application holds at most ${MAX_KEYS_PER_APPLICATION} keys; delete one first.`,
        );
      const at = atSerialCount(count);
      const written = await transactOrFalse(this.client, [
        // Not into an application being deleted: its deletion's listing of keys is not outrun.
        whileNotDeleting(this.tableName, keys.application(key.tenant_id, key.application_id)),
        {
          Update: {
            TableName: this.tableName,
            Key: serialKey,
            UpdateExpression: "SET #count = :next",
            ConditionExpression: at.ConditionExpression,
            ExpressionAttributeNames: { "#count": "count" },
            ExpressionAttributeValues: { ":next": (count ?? 0) + 1, ...at.ExpressionAttributeValues },
          },
        },
        ...(key.minted_by
          ? [whileNotDeleting(this.tableName, keys.member(key.tenant_id, key.minted_by))]
          : []),
        ...this.keyPuts(key),
        this.audit.put(audit),
      ]);
      if (written) return;
      // Which condition refused: the application gone, its minting member gone, or another addition (again).
      if (!(await this.notDeleting(keys.application(key.tenant_id, key.application_id))))
        throw notFound("The application");
      if (key.minted_by && !(await this.memberActive(key.tenant_id, key.minted_by)))
        throw forbidden(MINTER_REMOVED);
    }
    throw conflict("Keys of this application are being added at the same moment; retry.");
  }

  async listKeys(tenantId: string, applicationId: string): Promise<ApplicationKey[]> {
    const stored = await this.storedKeys(tenantId, applicationId);
    return stored.map(({ id, application_id, created_at }) => ({ id, application_id, created_at }));
  }

  async deleteKey(
    tenantId: string,
    applicationId: string,
    keyId: string,
    audit: LogEntry,
  ): Promise<string | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.applicationKey(tenantId, applicationId, keyId) }),
    );
    const keyHash = out.Item?.key_hash as string | undefined;
    if (!keyHash) return undefined;
    const written = await transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.applicationKey(tenantId, applicationId, keyId),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      { Delete: { TableName: this.tableName, Key: keys.apiKey(keyHash) } },
      this.audit.put(audit),
    ]);
    return written ? keyHash : undefined;
  }
}
