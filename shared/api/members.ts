import { idParams, paginated } from "#shared/schemas/common.ts";
import {
  acceptedMemberSchema,
  acceptInvitationBody,
  createInvitationBody,
  invitationSchema,
  listInvitationsQuery,
  listMembersQuery,
  memberSchema,
} from "#shared/schemas/members.ts";
import { problem, routeGroup } from "./group.ts";

/** Members of a tenant and invitations. */
export const membersRoutes = routeGroup("members", {
  listMembers: {
    method: "GET",
    path: "/tenants/self/members",
    auth: "key",
    permissions: ["tenant:member:read"],
    summary: "List the tenant's members (user_id repeatable; size at most 50)",
    query: listMembersQuery,
    responses: { 200: { description: "Page of members", schema: paginated(memberSchema) } },
  },
  deleteMember: {
    method: "DELETE",
    path: "/tenants/self/members/{id}",
    auth: "key",
    permissions: ["tenant:member:delete"],
    summary: "Delete a member and revoke all of its access (not the OWNER)",
    params: idParams,
    responses: {
      204: { description: "Deleted" },
      404: problem("Not found"),
      409: problem("The OWNER cannot be deleted"),
    },
  },
  createInvitation: {
    method: "POST",
    path: "/tenants/self/invitations",
    auth: "key",
    permissions: ["tenant:invitation:create"],
    summary: "Invite someone by e-mail (a single-use acceptance link is sent)",
    body: createInvitationBody,
    responses: { 201: { description: "Invitation", schema: invitationSchema } },
  },
  resendInvitation: {
    method: "POST",
    path: "/tenants/self/invitations/{id}/resend",
    auth: "key",
    permissions: ["tenant:invitation:create", "tenant:invitation:update"],
    summary: "Resend: 72 more hours from now, earlier links invalidated",
    params: idParams,
    responses: {
      200: { description: "Invitation", schema: invitationSchema },
      404: problem("Not found"),
    },
  },
  listInvitations: {
    method: "GET",
    path: "/tenants/self/invitations",
    auth: "key",
    permissions: ["tenant:invitation:read"],
    summary: "List invitations (status=PENDING|EXPIRED)",
    query: listInvitationsQuery,
    responses: {
      200: { description: "Page of invitations", schema: paginated(invitationSchema) },
    },
  },
  getInvitation: {
    method: "GET",
    path: "/tenants/self/invitations/{id}",
    auth: "key",
    permissions: ["tenant:invitation:read"],
    summary: "Get an invitation",
    params: idParams,
    responses: {
      200: { description: "Invitation", schema: invitationSchema },
      404: problem("Not found"),
    },
  },
  deleteInvitation: {
    method: "DELETE",
    path: "/tenants/self/invitations/{id}",
    auth: "key",
    permissions: ["tenant:invitation:delete"],
    summary: "Delete an invitation; its links stop working",
    params: idParams,
    responses: { 204: { description: "Deleted" }, 404: problem("Not found") },
  },
  invitationPage: {
    method: "GET",
    path: "/invitations/accept",
    auth: "none",
    summary:
      "The page an invitation link opens: a form that POSTs the code (from the link's fragment) to /invitations/accept",
    ownContentSecurityPolicy: true,
    responses: { 200: { description: "HTML" } },
  },
  acceptInvitation: {
    answersCredential: true,
    method: "POST",
    path: "/invitations/accept",
    auth: "none",
    summary:
      "Accept an invitation with the code from its e-mail (no key): an ADMIN member and its management key",
    body: acceptInvitationBody,
    responses: {
      201: {
        description: "The new member with its management key (shown once)",
        schema: acceptedMemberSchema,
      },
      400: problem("Invalid, used or expired code"),
    },
  },
});
