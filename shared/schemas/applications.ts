import * as z from "zod";
import { CONTAINER_PATTERN, normalizeContainer } from "#shared/domain/access-rules.ts";
import { MAX_ALLOWED_ORIGINS, originError } from "#shared/domain/origins.ts";
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

/** An origin a browser page calls from: exactly `scheme://host[:port]` (shared/domain/origins.ts). */
const originSchema = z
  .string()
  .max(300)
  .superRefine((value, ctx) => {
    const error = originError(value);
    if (error) ctx.addIssue({ code: "custom", message: error });
  })
  .meta({ example: "https://shop.example.com" });

const allowedOrigins = z
  .array(originSchema)
  .max(MAX_ALLOWED_ORIGINS)
  .describe(
    "Web origins whose pages may call the browser routes (POST /tokens, GET and PATCH /tokens/{id}, POST /sessions) " +
      "with this application's keys, and may embed its Elements frames. None: no browser page may.",
  );

export const createApplicationBody = z.object({
  name,
  type: z.enum(APPLICATION_TYPES),
  permissions: z.array(permissionSchema).max(50).default([]),
  rules: z.array(accessRuleSchema).max(50).default([]),
  allowed_origins: allowedOrigins.default([]),
  create_key: z.boolean().default(true),
});

export const updateApplicationBody = z.object({
  name,
  permissions: z.array(permissionSchema).max(50).default([]),
  rules: z.array(accessRuleSchema).max(50).default([]),
  allowed_origins: allowedOrigins.default([]),
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
    allowed_origins: allowedOrigins,
    keys: z.array(applicationKeySchema).optional(),
    key: z.string().optional(),
    member_id: z.string().optional().describe("Set on a member's own management application."),
    minted_by: z
      .string()
      .optional()
      .describe("The member through whose keys the application was created; deleting it revokes their keys."),
    created_through: z
      .string()
      .optional()
      .describe(
        "The non-member application whose key created this one; deleting it revokes the keys it minted here.",
      ),
    created_by: z.string().optional(),
    created_at: z.string(),
    modified_by: z.string().optional(),
    modified_at: z.string().optional(),
  })
  .meta({ id: "Application" });

export const applicationKeyParams = z.object({ id: generatedId, keyId: generatedId });
