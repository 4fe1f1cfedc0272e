import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { LogEntry } from "#shared/domain/audit.ts";
import type { TenantMember } from "#shared/domain/entities.ts";
import { validationError } from "#shared/domain/errors.ts";
import type { MemberDeletionAudit, MemberStore, StoredInvitation } from "#shared/ports/member-store.ts";
import type { PageRequest, StoredKey, StorePage } from "#shared/ports/stores.ts";
import type { DynamoApplicationStore } from "./application-store.ts";
import { type AuditItems, stripKeys } from "./audit-items.ts";
import { transactOrFalse } from "./client.ts";
import {
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
import { decodeCursor, encodeCursor, queryAll } from "./paging.ts";
import { DELETION_STARTED, epochSeconds, keys } from "./schema.ts";

const invitationKeys = {
  invitation: (tenantId: string, id: string) => ({ PK: `TENANT#${tenantId}`, SK: `INVITE#${id}` }),
  code: (codeHash: string) => ({ PK: `INVCODE#${codeHash}`, SK: "META" }),
};

type Item = Record<string, unknown>;

/** Members and invitations live in the tenant's partition; invitation codes are looked up by hash. */
export class DynamoMemberStore implements MemberStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly audit: AuditItems,
    private readonly applications: DynamoApplicationStore,
  ) {}

  private queryPrefix(tenantId: string, prefix: string): Promise<Item[]> {
    return queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": `TENANT#${tenantId}`, ":prefix": prefix },
      ConsistentRead: true,
    });
  }

  async listMembers(
    tenantId: string,
    userIds: string[] | undefined,
    page: PageRequest,
  ): Promise<StorePage<TenantMember>> {
    const after = page.start === undefined ? undefined : decodeCursor(page.start);
    if (page.start !== undefined && after === undefined)
      throw validationError("The start cursor is invalid.");
    const all = (await this.queryPrefix(tenantId, "MEMBER#"))
      .map((item) => stripKeys<TenantMember>(item, [DELETION_STARTED]))
      .filter((m) => !userIds?.length || userIds.includes(m.user.id));
    const from = after ? all.findIndex((m) => m.id === after) + 1 : (page.page - 1) * page.size;
    const items = all.slice(from, from + page.size);
    const last = items.at(-1);
    return {
      items,
      total: all.length,
      ...(from + page.size < all.length && last ? { next: encodeCursor(last.id) } : {}),
    };
  }

  async getMember(tenantId: string, id: string): Promise<TenantMember | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.member(tenantId, id) }),
    );
    return out.Item ? stripKeys<TenantMember>(out.Item, [DELETION_STARTED]) : undefined;
  }

  async deleteMember(
    tenantId: string,
    memberId: string,
    audit: MemberDeletionAudit,
  ): Promise<{ applicationIds: string[]; keys: { hash: string; id: string }[] } | undefined> {
    // Marked first: no key is minted through the member from here, and its keys stop authenticating.
    await markDeletionStarted(this.client, this.tableName, keys.member(tenantId, memberId), {
      condition: "#role <> :owner",
      names: { "#role": "role" },
      values: { ":owner": "OWNER" },
    });
    return untilRevoked(() => this.deleteMemberOnce(tenantId, memberId, audit), "The member");
  }

  private async deleteMemberOnce(tenantId: string, memberId: string, audit: MemberDeletionAudit) {
    const member = await this.getMember(tenantId, memberId);
    if (!member || member.role === "OWNER") return undefined;
    const bound = (await this.queryPrefix(tenantId, "APP#")).filter((app) => app.member_id === memberId);
    // No key is minted through the member any more, nor added to its own applications once they are marked too.
    // A key added to one before its mark moves its count: the counts first, the keys after, and a key added
    // between the two refuses the write (serialDelete), so the next attempt lists it.
    await Promise.all(
      bound.map((app) =>
        markDeletionStarted(this.client, this.tableName, keys.application(tenantId, String(app.id))),
      ),
    );
    const boundCounts = await Promise.all(
      bound.map((app) =>
        serialCount(this.client, this.tableName, keys.applicationKeySerial(tenantId, String(app.id))),
      ),
    );
    const allKeys = await this.queryPrefix(tenantId, "APPKEY#");
    const ofBound = allKeys.filter((k) => bound.some((app) => String(k.SK).startsWith(`APPKEY#${app.id}#`)));
    const minted = allKeys.filter((k) => k.minted_by === memberId && !ofBound.includes(k));
    // Keys go first when there are more than the last write holds (key-revocation.ts).
    const revoked = [...ofBound, ...minted].map((k) => ({
      listing: { PK: String(k.PK), SK: String(k.SK) },
      hash: String(k.key_hash),
      entry: this.audit.put(audit.key({ id: String(k.id), applicationId: String(k.application_id) })),
    }));
    // The member, its user and its entry; each bound application's two items and entry.
    const room = Math.floor((OWN_TRANSACT_ITEMS - 3 - 3 * bound.length) / ITEMS_PER_REVOKED_KEY);
    const keyDeletes = await revokeBeyond(this.client, this.tableName, revoked, room);
    if (!keyDeletes) return new KeysChanged(revoked.length);
    const written = await transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.member(tenantId, memberId),
          ConditionExpression: "attribute_exists(PK) AND #role <> :owner",
          ExpressionAttributeNames: { "#role": "role" },
          ExpressionAttributeValues: { ":owner": "OWNER" },
        },
      },
      // A user is made for its one membership (acceptInvitation): its e-mail and names go with it (kept, they
      // outlived the member and, unreachable from the tenant's members, its deletion: lifecycle review).
      { Delete: { TableName: this.tableName, Key: keys.user(member.user.id) } },
      ...bound.flatMap((app, i) => [
        { Delete: { TableName: this.tableName, Key: keys.application(tenantId, String(app.id)) } },
        serialDelete(this.tableName, keys.applicationKeySerial(tenantId, String(app.id)), boundCounts[i]),
        this.audit.put(audit.application(String(app.id))),
      ]),
      ...keyDeletes,
      this.audit.put(audit.member),
    ]);
    // Refused: the member gone or made owner (the next attempt's read ends it), or a key revoked on its own or
    // added since the listing.
    if (!written) return new KeysChanged(revoked.length);
    return {
      applicationIds: bound.map((app) => String(app.id)),
      keys: minted.map((k) => ({ hash: String(k.key_hash), id: String(k.id) })),
    };
  }

  private invitationItem(invitation: StoredInvitation, codeHash: string) {
    return {
      ...invitationKeys.invitation(invitation.tenant_id, invitation.id),
      entity: "tenant_invitation",
      ...invitation,
      code_hash: codeHash,
    };
  }

  private codeItem(invitation: StoredInvitation, codeHash: string) {
    return {
      ...invitationKeys.code(codeHash),
      entity: "invitation_code",
      tenant_id: invitation.tenant_id,
      invitation_id: invitation.id,
      ttl: epochSeconds(new Date(invitation.expires_at)) + 86_400,
    };
  }

  async createInvitation(invitation: StoredInvitation, codeHash: string, audit: LogEntry): Promise<void> {
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.tableName,
              Item: this.invitationItem(invitation, codeHash),
              ConditionExpression: "attribute_not_exists(PK)",
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: this.codeItem(invitation, codeHash),
              ConditionExpression: "attribute_not_exists(PK)",
            },
          },
          this.audit.put(audit),
        ],
      }),
    );
  }

  private async invitationItemOf(tenantId: string, id: string): Promise<Item | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: invitationKeys.invitation(tenantId, id),
        ConsistentRead: true,
      }),
    );
    return out.Item;
  }

  private toInvitation(item: Item): StoredInvitation {
    return stripKeys<StoredInvitation>(item, ["code_hash"]);
  }

  async getInvitation(tenantId: string, id: string): Promise<StoredInvitation | undefined> {
    const item = await this.invitationItemOf(tenantId, id);
    return item ? this.toInvitation(item) : undefined;
  }

  async listInvitations(tenantId: string): Promise<StoredInvitation[]> {
    return (await this.queryPrefix(tenantId, "INVITE#")).map((item) => this.toInvitation(item));
  }

  async renewInvitation(
    invitation: StoredInvitation,
    newCodeHash: string,
    audit: LogEntry,
  ): Promise<boolean> {
    const current = await this.invitationItemOf(invitation.tenant_id, invitation.id);
    if (!current) return false;
    return transactOrFalse(this.client, [
      {
        Put: {
          TableName: this.tableName,
          Item: this.invitationItem(invitation, newCodeHash),
          ConditionExpression: "code_hash = :old",
          ExpressionAttributeValues: { ":old": current.code_hash },
        },
      },
      { Delete: { TableName: this.tableName, Key: invitationKeys.code(String(current.code_hash)) } },
      { Put: { TableName: this.tableName, Item: this.codeItem(invitation, newCodeHash) } },
      this.audit.put(audit),
    ]);
  }

  async deleteInvitation(tenantId: string, id: string, audit: LogEntry): Promise<boolean> {
    const current = await this.invitationItemOf(tenantId, id);
    if (!current) return false;
    return transactOrFalse(this.client, [
      {
        Delete: {
          TableName: this.tableName,
          Key: invitationKeys.invitation(tenantId, id),
          ConditionExpression: "code_hash = :code",
          ExpressionAttributeValues: { ":code": current.code_hash },
        },
      },
      { Delete: { TableName: this.tableName, Key: invitationKeys.code(String(current.code_hash)) } },
      this.audit.put(audit),
    ]);
  }

  async findInvitationByCode(codeHash: string) {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: invitationKeys.code(codeHash), ConsistentRead: true }),
    );
    return out.Item
      ? { tenantId: String(out.Item.tenant_id), invitationId: String(out.Item.invitation_id) }
      : undefined;
  }

  async acceptInvitation(input: Parameters<MemberStore["acceptInvitation"]>[0]): Promise<boolean> {
    const { invitation, codeHash, user, member, application, key } = input;
    const put = (item: Item) => ({
      Put: { TableName: this.tableName, Item: item, ConditionExpression: "attribute_not_exists(PK)" },
    });
    // The member behind the inviter (its own application): an application's member never changes.
    const inviter = invitation.created_by
      ? await this.applications.get(invitation.tenant_id, invitation.created_by)
      : undefined;
    if (invitation.created_by && !inviter) return false;
    return transactOrFalse(this.client, [
      {
        // The code is consumed with the invitation: a second accept (or a resent/deleted one) finds nothing.
        Delete: {
          TableName: this.tableName,
          Key: invitationKeys.invitation(invitation.tenant_id, invitation.id),
          ConditionExpression: "code_hash = :code",
          ExpressionAttributeValues: { ":code": codeHash },
        },
      },
      {
        Delete: {
          TableName: this.tableName,
          Key: invitationKeys.code(codeHash),
          ConditionExpression: "attribute_exists(PK)",
        },
      },
      // The inviter (a member's own application) and its member still are, with no deletion of either begun, as
      // the member is made: an invitation of a member being deleted no longer brings in a member that outlives it
      // (review s53: it was checked only for existing).
      ...(invitation.created_by
        ? [whileNotDeleting(this.tableName, keys.application(invitation.tenant_id, invitation.created_by))]
        : []),
      ...(inviter?.member_id
        ? [whileNotDeleting(this.tableName, keys.member(invitation.tenant_id, inviter.member_id))]
        : []),
      // Named after its tenant: the purge's scan finds it even once its member is gone (tenant-purge-store.ts).
      put({ ...keys.user(user.id), entity: "user", tenant_id: invitation.tenant_id, ...user }),
      put({ ...keys.member(member.tenant_id, member.id), entity: "tenant_member", ...member }),
      this.applications.applicationPut(application),
      ...this.applications.keyPuts(key as StoredKey),
      ...input.audit.map((entry) => this.audit.put(entry)),
    ]);
  }
}
