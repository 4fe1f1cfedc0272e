import type { LogEntry } from "#shared/domain/audit.ts";
import type { Application, TenantMember, User } from "#shared/domain/entities.ts";
import type { PageRequest, RevocationAudit, StoredKey, StorePage } from "#shared/ports/stores.ts";

export interface StoredInvitation {
  id: string;
  tenant_id: string;
  email: string;
  expires_at: string;
  created_by?: string;
  created_at: string;
  modified_by?: string;
  modified_at?: string;
}

/** A member's deletion as the audit log tells it: the member's entry, and one for each application and key it revokes. */
export interface MemberDeletionAudit {
  member: LogEntry;
  application: (applicationId: string) => LogEntry;
  key: RevocationAudit;
}

export interface MemberStore {
  listMembers(
    tenantId: string,
    userIds: string[] | undefined,
    page: PageRequest,
  ): Promise<StorePage<TenantMember>>;
  getMember(tenantId: string, id: string): Promise<TenantMember | undefined>;
  /**
   * Deletes the member, every application bound to it with their keys, and every key the member's credentials
   * minted (`minted_by`); what was removed, for cache eviction. Undefined when the member is gone (or the OWNER).
   */
  deleteMember(
    tenantId: string,
    memberId: string,
    audit: MemberDeletionAudit,
  ): Promise<{ applicationIds: string[]; keys: { hash: string; id: string }[] } | undefined>;
  createInvitation(invitation: StoredInvitation, codeHash: string, audit: LogEntry): Promise<void>;
  getInvitation(tenantId: string, id: string): Promise<StoredInvitation | undefined>;
  listInvitations(tenantId: string): Promise<StoredInvitation[]>;
  /** New expiry and code: the old code stops working in the same write. False when the invitation is gone. */
  renewInvitation(invitation: StoredInvitation, newCodeHash: string, audit: LogEntry): Promise<boolean>;
  deleteInvitation(tenantId: string, id: string, audit: LogEntry): Promise<boolean>;
  findInvitationByCode(codeHash: string): Promise<{ tenantId: string; invitationId: string } | undefined>;
  /** Consumes the code and creates the user, member, application and key at once; false if the code is spent. */
  acceptInvitation(input: {
    invitation: StoredInvitation;
    codeHash: string;
    user: User;
    member: TenantMember;
    application: Application;
    key: StoredKey;
    audit: LogEntry[];
  }): Promise<boolean>;
}
