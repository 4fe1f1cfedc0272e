import * as z from "zod";
import { CONTAINER_PATTERN, normalizeContainer } from "#shared/domain/access-rules.ts";
import { ALL_PERMISSIONS, APPLICATION_TYPES, TOKEN_PERMISSIONS } from "#shared/domain/permissions.ts";
import { generatedId } from "./common.ts";

export const permissionSchema = z.enum(ALL_PERMISSIONS);

const CONTAINER_MESSAGE = "must start and end with / and hold segments of [a-z0-9_-]";

/** A container wherever a request names one (tokens, rules, conditions): `[""]`, `a/b` and `//` are 400s. */
export const containerSchema = z
  .string()
  .max(512)
  .transform((v) => v.trim().toLowerCase())
  .pipe(z.string().regex(CONTAINER_PATTERN, CONTAINER_MESSAGE));

/** A condition on the container compares whole containers: its value is one, normalised like the others. */
export const conditionSchema = z
  .object({
    attribute: z.enum(["id", "container"]),
    operator: z.enum(["equals", "starts_with"]),
    value: z.string().min(1).max(400),
  })
  .transform((condition, ctx) => {
    if (condition.attribute !== "container") return condition;
    const value = normalizeContainer(condition.value);
    if (value === undefined) {
      ctx.addIssue({ code: "custom", path: ["value"], message: CONTAINER_MESSAGE });
      return z.NEVER;
    }
    return { ...condition, value };
  });

export const accessRuleSchema = z
  .object({
    description: z.string().max(500).optional(),
    priority: z.number().int().min(1),
    container: containerSchema.optional(),
    conditions: z.array(conditionSchema).max(10).optional(),
    transform: z.enum(["redact", "mask", "reveal"]),
    permissions: z.array(z.enum(TOKEN_PERMISSIONS)),
  })
  .meta({ id: "AccessRule" });

const name = z.string().trim().min(1).max(200);

export const createApplicationBody = z.object({
  name,
  type: z.enum(APPLICATION_TYPES),
  permissions: z.array(permissionSchema).max(50).default([]),
  rules: z.array(accessRuleSchema).max(50).default([]),
  create_key: z.boolean().default(true),
});

export const updateApplicationBody = z.object({
  name,
  permissions: z.array(permissionSchema).max(50).default([]),
  rules: z.array(accessRuleSchema).max(50).default([]),
});

export const applicationKeySchema = z
  .object({ id: z.string(), key: z.string().optional(), created_at: z.string() })
  .meta({ id: "ApplicationKey" });

export const applicationSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    type: z.enum(APPLICATION_TYPES),
    permissions: z.array(permissionSchema),
    rules: z.array(accessRuleSchema),
    keys: z.array(applicationKeySchema).optional(),
    key: z.string().optional(),
    member_id: z.string().optional().describe("Set on a member's own management application."),
    minted_by: z
      .string()
      .optional()
      .describe("The member through whose keys the application was created; deleting it revokes their keys."),
    created_by: z.string().optional(),
    created_at: z.string(),
    modified_by: z.string().optional(),
    modified_at: z.string().optional(),
  })
  .meta({ id: "Application" });

export const applicationKeyParams = z.object({ id: generatedId, keyId: generatedId });
