import type { Routes } from "#shared/api/index.ts";
import { membersRoutes } from "#shared/api/members.ts";
import { composeCore } from "#shared/composition/core.ts";
import { mailer } from "#shared/composition/mailer.ts";
import { auditLogStore, memberStore, tenantStore } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
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
import { createHttpHandler, type GroupHandlers, type GroupReplays, replayAs } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";
import { ACCEPT_PAGE_CSP, ACCEPT_PAGE_HTML } from "#shared/members/accept-page.ts";

/** The adapters the members routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...memberStore(core), ...tenantStore(core), ...auditLogStore(core), ...mailer(core) };
}
export type MembersDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "members", MembersDeps> = {
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
  invitationPage: async () => ({
    status: 200,
    raw: {
      statusCode: 200,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": ACCEPT_PAGE_CSP,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "cross-origin-opener-policy": "same-origin",
      },
      body: ACCEPT_PAGE_HTML,
    },
  }),
  acceptInvitation: async ({ deps, body }) => ({ status: 201, body: await acceptInvitation(deps, body) }),
};

/**
 * An invitation write whose answer was lost (it died after its effect) is answered with the invitation as it is
 * now; its e-mail, sent after the write, may not have gone (resend it). A lost acceptance answers 409.
 */
export const replays: GroupReplays<Routes, "members", MembersDeps> = {
  effects: {
    createInvitation: replayAs("tenant_invitation", "create", 201, ({ deps, principal }, id) =>
      getInvitation(deps, principal, id),
    ),
    resendInvitation: replayAs("tenant_invitation", "update", 200, ({ deps, principal }, id) =>
      getInvitation(deps, principal, id),
    ),
  },
};

export const handler = createHttpHandler(membersRoutes, "members", routes, () => compose(config()), replays);
