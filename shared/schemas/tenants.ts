import * as z from "zod";

export const createTenantBody = z.object({
  name: z.string().trim().min(1).max(200),
  owner: z
    .object({
      email: z.email().max(320).optional(),
      first_name: z.string().max(100).optional(),
      last_name: z.string().max(100).optional(),
    })
    .optional(),
});

export const tenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    owner_id: z.string(),
    created_at: z.string(),
    modified_at: z.string().optional(),
  })
  .meta({ id: "Tenant" });

export const createdTenantSchema = tenantSchema.extend({
  management_key: z.string(),
  management_application_id: z.string(),
});

export const clockBody = z.object({
  advance_seconds: z
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 86_400),
});
