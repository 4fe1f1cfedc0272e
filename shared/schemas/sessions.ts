import * as z from "zod";
import { TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { accessRuleSchema } from "./applications.ts";

export const authorizeSessionBody = z.object({
  nonce: z.string().min(1).max(200),
  permissions: z.array(z.enum(TOKEN_PERMISSIONS)).max(10).default([]),
  rules: z.array(accessRuleSchema).max(50).default([]),
  expires_at: z.string().min(1).max(64).optional(),
});

export const sessionCreatedSchema = z
  .object({ session_key: z.string(), nonce: z.string(), expires_at: z.string() })
  .meta({ id: "SessionCreated" });
