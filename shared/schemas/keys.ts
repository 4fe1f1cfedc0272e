import * as z from "zod";
import { generatedId } from "./common.ts";

const keyVersionSchema = z
  .object({
    version: z.number().int(),
    created_at: z.string().optional(),
    state: z.enum(["current", "active", "destroyed"]),
    tokens: z.number().int().nullable().meta({
      description: "Tokens that need this version (kept as counters by every token write); null: not counted",
    }),
  })
  .meta({ id: "KeyVersion" });

export const keysSchema = z
  .object({
    current: z.number().int(),
    versions: z.array(keyVersionSchema),
    hmac: z.object({ current: z.number().int(), versions: z.array(keyVersionSchema) }),
    custody: z
      .object({
        key_arn: z.string(),
        keys_not_moved: z.number().int(),
      })
      .optional()
      .describe(
        "Once the tenant brought its own KMS key (PUT /tenants/self/keys/kms): that key, and how many of the tenant's data and HMAC keys are not yet wrapped under it (a move cut short; the same PUT sent again finishes it). Absent while the deployment's key wraps them.",
      ),
  })
  .meta({ id: "TenantKeys" });

export const rewrapJobSchema = z
  .object({
    id: z.string(),
    status: z.enum(["running", "succeeded", "failed"]),
    total: z.number().int(),
    done: z.number().int(),
    skipped: z.number().int(),
    created_at: z.string(),
    finished_at: z.string().optional(),
  })
  .meta({ id: "RewrapJob" });

export const keyVersionParams = z.object({
  version: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

export const rewrapParams = z.object({ id: generatedId });
