import { routes } from "#shared/api/index.ts";
import {
  acceptInvitation,
  createInvitation,
  deleteInvitation,
  deleteMember,
  getInvitation,
  listInvitations,
  listMembers,
  resendInvitation,
} from "#shared/domain/members.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

export const handler = createHttpHandler(routes, "members", {
  listMembers: async ({ deps, principal, query }) => ({
    status: 200,
    body: envelope(await listMembers(deps, principal, query.user_id, pageRequest(query)), query),
  }),
  deleteMember: async ({ deps, principal, params }) => {
    await deleteMember(deps, principal, params.id);
    return { status: 204 };
  },
  createInvitation: async ({ deps, principal, body }) => ({
    status: 201,
    body: await createInvitation(deps, principal, body.email),
  }),
  resendInvitation: async ({ deps, principal, params }) => ({
    status: 200,
    body: await resendInvitation(deps, principal, params.id),
  }),
  listInvitations: async ({ deps, principal, query }) => ({
    status: 200,
    body: envelope(await listInvitations(deps, principal, query.status, pageRequest(query)), query),
  }),
  getInvitation: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getInvitation(deps, principal, params.id),
  }),
  deleteInvitation: async ({ deps, principal, params }) => {
    await deleteInvitation(deps, principal, params.id);
    return { status: 204 };
  },
  acceptInvitation: async ({ deps, body }) => ({ status: 201, body: await acceptInvitation(deps, body) }),
});
