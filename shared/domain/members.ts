import { randomBytes } from "node:crypto";
import { conflict, notFound, validationError } from "#shared/domain/errors.ts";
import { hashKey, newApiKey, uuidv7 } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { Mailer } from "#shared/ports/mailer.ts";
import type { MemberStore, StoredInvitation } from "#shared/ports/member-store.ts";
import type { AuditLogStore, PageRequest, TenantStore } from "#shared/ports/stores.ts";
import { auditEvent, keyRevocationEvents, recordEvents } from "./audit-entry.ts";
import type { Authenticator } from "./authentication.ts";
import type { Application, TenantMember, TenantPrincipal, User } from "./entities.ts";
import { assertActsForMember, isMemberBound } from "./grant-ceiling.ts";
import { MANAGEMENT_PERMISSIONS } from "./permissions.ts";

/** Invitations are valid 72 hours; a resend gives them 72 hours from then. */
export const INVITATION_LIFETIME_SECONDS = 72 * 3600;

export interface MemberDeps {
  members: MemberStore;
  auditLog: AuditLogStore;
  tenants: TenantStore;
  mailer: Mailer;
  authenticator: Authenticator;
  clock: Clock;
  config: { invitationUrl: string };
}

type InvitationStatus = "PENDING" | "EXPIRED";

function statusOf(invitation: StoredInvitation, now: Date): InvitationStatus {
  return Date.parse(invitation.expires_at) > now.getTime() ? "PENDING" : "EXPIRED";
}

function view(invitation: StoredInvitation, now: Date) {
  return { ...invitation, status: statusOf(invitation, now) };
}

export async function listMembers(
  deps: MemberDeps,
  principal: TenantPrincipal,
  userIds: string[] | undefined,
  page: PageRequest,
) {
  const result = await deps.members.listMembers(principal.tenantId, userIds, page);
  await recordEvents(
    deps,
    result.items.map((m) =>
      auditEvent(deps, principal, "tenant_member", m.id, "read", "Member read in a list"),
    ),
  );
  return result;
}

export async function deleteMember(
  deps: MemberDeps,
  principal: TenantPrincipal,
  memberId: string,
): Promise<void> {
  assertActsForMember(principal, "delete members");
  const member = await deps.members.getMember(principal.tenantId, memberId);
  if (!member) throw notFound("The member");
  if (member.role === "OWNER") throw conflict("The tenant's OWNER member cannot be deleted.");
  const removed = await deps.members.deleteMember(principal.tenantId, memberId, {
    member: auditEvent(
      deps,
      principal,
      "tenant_member",
      memberId,
      "delete",
      "Member deleted; its applications and every key its credentials minted revoked",
    ),
    // Each revoked application's and key's own history ends with it (lifecycle review: they ended at "create").
    application: (applicationId) =>
      auditEvent(deps, principal, "application", applicationId, "delete", `Deleted with member ${memberId}`),
    key: keyRevocationEvents(deps, principal, `member ${memberId}`),
  });
  if (!removed) throw notFound("The member");
  for (const applicationId of removed.applicationIds) deps.authenticator.evict({ applicationId });
  // The minted keys, and the sessions they authorized.
  for (const key of removed.keys) deps.authenticator.evict({ keyHash: key.hash, keyId: key.id });
}

/** A new single-use code: only its hash is stored; the e-mail carries the code itself. */
function newCode() {
  const code = randomBytes(32).toString("base64url");
  return { code, hash: hashKey(code) };
}

async function sendInvitation(deps: MemberDeps, invitation: StoredInvitation, code: string) {
  const tenant = await deps.tenants.getTenant(invitation.tenant_id);
  // In the fragment: a browser never sends it, so no server, proxy or access log along the way sees the code.
  const link = `${deps.config.invitationUrl}#code=${encodeURIComponent(code)}`;
  await deps.mailer.send({
    to: invitation.email,
    subject: `You are invited to ${tenant?.name ?? "a tenant"} on svc-vault`,
    text: [
      `You have been invited to join ${tenant?.name ?? "a tenant"} on svc-vault.`,
      "",
      `Accept the invitation: ${link}`,
      "",
      `The link works once and expires at ${invitation.expires_at}.`,
      `To accept through the API, POST {"code": "<the code>"} to /invitations/accept, the code being:`,
      "",
      code,
    ].join("\n"),
  });
}

/**
 * An accepted invitation makes an ADMIN whose own key has no ceiling (grant-ceiling.ts), so only a key that has
 * none either, a member's own, may invite (403 for every other key, whatever permissions it holds).
 */
export async function createInvitation(deps: MemberDeps, principal: TenantPrincipal, email: string) {
  assertActsForMember(principal, "invite members");
  const now = deps.clock.now();
  const invitation: StoredInvitation = {
    id: uuidv7(now),
    tenant_id: principal.tenantId,
    email,
    expires_at: new Date(now.getTime() + INVITATION_LIFETIME_SECONDS * 1000).toISOString(),
    created_by: principal.application.id,
    created_at: now.toISOString(),
  };
  const { code, hash } = newCode();
  await deps.members.createInvitation(
    invitation,
    hash,
    auditEvent(deps, principal, "tenant_invitation", invitation.id, "create", "Invitation created and sent"),
  );
  try {
    await sendInvitation(deps, invitation, code);
  } catch (error) {
    // An invitation whose e-mail never left would hold a code nobody has: take it back.
    await deps.members.deleteInvitation(
      principal.tenantId,
      invitation.id,
      auditEvent(
        deps,
        principal,
        "tenant_invitation",
        invitation.id,
        "delete",
        "Invitation withdrawn: the e-mail could not be sent",
      ),
    );
    throw error;
  }
  return view(invitation, now);
}

async function findInvitation(deps: MemberDeps, principal: TenantPrincipal, id: string) {
  const invitation = await deps.members.getInvitation(principal.tenantId, id);
  if (!invitation) throw notFound("The invitation");
  return invitation;
}

/** Resending renews the invitation (a fresh code, 72 h more), so like inviting it needs a member's own key. */
export async function resendInvitation(deps: MemberDeps, principal: TenantPrincipal, id: string) {
  assertActsForMember(principal, "resend invitations");
  const current = await findInvitation(deps, principal, id);
  const now = deps.clock.now();
  const renewed: StoredInvitation = {
    ...current,
    expires_at: new Date(now.getTime() + INVITATION_LIFETIME_SECONDS * 1000).toISOString(),
    modified_by: principal.application.id,
    modified_at: now.toISOString(),
  };
  const { code, hash } = newCode();
  const saved = await deps.members.renewInvitation(
    renewed,
    hash,
    auditEvent(
      deps,
      principal,
      "tenant_invitation",
      id,
      "update",
      "Invitation resent; earlier links invalidated",
    ),
  );
  if (!saved) throw notFound("The invitation");
  await sendInvitation(deps, renewed, code);
  return view(renewed, now);
}

export async function getInvitation(deps: MemberDeps, principal: TenantPrincipal, id: string) {
  const invitation = await findInvitation(deps, principal, id);
  await recordEvents(deps, [auditEvent(deps, principal, "tenant_invitation", id, "read", "Invitation read")]);
  return view(invitation, deps.clock.now());
}

export async function listInvitations(
  deps: MemberDeps,
  principal: TenantPrincipal,
  status: InvitationStatus | undefined,
  page: PageRequest,
) {
  const now = deps.clock.now();
  const all = (await deps.members.listInvitations(principal.tenantId)).filter(
    (i) => !status || statusOf(i, now) === status,
  );
  const offset = (page.page - 1) * page.size;
  const items = all.slice(offset, offset + page.size);
  await recordEvents(
    deps,
    items.map((i) =>
      auditEvent(deps, principal, "tenant_invitation", i.id, "read", "Invitation read in a list"),
    ),
  );
  return { items: items.map((i) => view(i, now)), total: all.length };
}

export async function deleteInvitation(
  deps: MemberDeps,
  principal: TenantPrincipal,
  id: string,
): Promise<void> {
  assertActsForMember(principal, "withdraw invitations");
  const deleted = await deps.members.deleteInvitation(
    principal.tenantId,
    id,
    auditEvent(
      deps,
      principal,
      "tenant_invitation",
      id,
      "delete",
      "Invitation deleted; its links invalidated",
    ),
  );
  if (!deleted) throw notFound("The invitation");
}

/**
 * POST /invitations/accept (no key): the code from the e-mail creates the user, an ADMIN member and a management
 * application bound to the member, whose key is answered once. The code works once, and not after expiry.
 */
export async function acceptInvitation(
  deps: MemberDeps,
  input: { code: string; first_name?: string; last_name?: string },
) {
  const refused = () =>
    validationError("The invitation code is invalid, used or expired.", {
      code: ["is invalid, used or expired"],
    });
  const codeHash = hashKey(input.code);
  const found = await deps.members.findInvitationByCode(codeHash);
  if (!found) throw refused();
  const invitation = await deps.members.getInvitation(found.tenantId, found.invitationId);
  const now = deps.clock.now();
  if (!invitation || statusOf(invitation, now) === "EXPIRED") throw refused();
  // Only a member may invite (createInvitation), and still be one when the invitation is accepted: an invitation
  // from a member since deleted, or one a narrower key made before that rule, is refused like a spent code.
  const inviter =
    invitation.created_by === undefined
      ? undefined
      : await deps.authenticator.application(invitation.tenant_id, invitation.created_by);
  if (!inviter || !isMemberBound(inviter)) throw refused();

  const at = now.toISOString();
  const user: User = {
    id: uuidv7(now),
    email: invitation.email,
    ...(input.first_name ? { first_name: input.first_name } : {}),
    ...(input.last_name ? { last_name: input.last_name } : {}),
  };
  const member: TenantMember = {
    id: uuidv7(now),
    tenant_id: invitation.tenant_id,
    role: "ADMIN",
    user,
    created_at: at,
  };
  const application: Application = {
    id: uuidv7(now),
    tenant_id: invitation.tenant_id,
    name: `${invitation.email} management`,
    type: "management",
    permissions: [...MANAGEMENT_PERMISSIONS],
    rules: [],
    member_id: member.id,
    created_at: at,
  };
  const managementKey = newApiKey("management");
  const actor = { type: "user" as const, id: user.id };
  const log = (
    entityType: "tenant_member" | "tenant_invitation" | "application",
    entityId: string,
    operation: "create" | "delete",
    message: string,
  ) => auditEvent(deps, { tenantId: invitation.tenant_id, actor }, entityType, entityId, operation, message);
  const accepted = await deps.members.acceptInvitation({
    invitation,
    codeHash,
    user,
    member,
    application,
    key: {
      id: uuidv7(now),
      tenant_id: invitation.tenant_id,
      application_id: application.id,
      created_at: at,
      key_hash: hashKey(managementKey),
    },
    audit: [
      log("tenant_invitation", invitation.id, "delete", "Invitation accepted"),
      log("tenant_member", member.id, "create", "Member joined by invitation"),
      log("application", application.id, "create", "Management application created for the new member"),
    ],
  });
  if (!accepted) throw refused();
  return { ...member, management_key: managementKey, management_application_id: application.id };
}
