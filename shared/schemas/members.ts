import * as z from "zod";
import { isValidEmail } from "#shared/domain/email.ts";
import { pagingQuery, repeatable } from "./common.ts";

export const MAX_MEMBER_PAGE_SIZE = 50;

export const listMembersQuery = pagingQuery(MAX_MEMBER_PAGE_SIZE).extend({
  user_id: repeatable(z.string().min(1).max(100)),
});

export const listInvitationsQuery = pagingQuery().extend({
  status: z.enum(["PENDING", "EXPIRED"]).optional(),
});

export const createInvitationBody = z.object({
  email: z.string().max(254).refine(isValidEmail, "must be a well-formed e-mail address (RFC 5322)"),
});

export const acceptInvitationBody = z.object({
  // Trimmed: a code copied from the .eml (CRLF line endings) or a terminal carries a \r or spaces.
  code: z.string().trim().min(1).max(200),
  first_name: z.string().trim().min(1).max(100).optional(),
  last_name: z.string().trim().min(1).max(100).optional(),
});

const userSchema = z.object({
  id: z.string(),
  email: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  picture: z.string().optional(),
});

export const memberSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    role: z.enum(["OWNER", "ADMIN"]),
    user: userSchema,
    created_by: z.string().optional(),
    created_at: z.string(),
  })
  .meta({ id: "TenantMember" });

export const acceptedMemberSchema = memberSchema.extend({
  management_key: z.string(),
  management_application_id: z.string(),
});

export const invitationSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    email: z.string(),
    status: z.enum(["PENDING", "EXPIRED"]),
    expires_at: z.string(),
    created_by: z.string().optional(),
    created_at: z.string(),
    modified_by: z.string().optional(),
    modified_at: z.string().optional(),
  })
  .meta({ id: "TenantInvitation" });
