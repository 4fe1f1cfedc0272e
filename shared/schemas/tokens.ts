import * as z from "zod";
import { dataSizeProblem, MAX_DATA_BYTES, MAX_MASK_BYTES } from "#shared/domain/tokens/token.ts";
import { TOKEN_TYPE_NAMES } from "#shared/domain/tokens/types.ts";
import { containerSchema } from "./applications.ts";
import { pagingQuery, repeatable, safeKey, storedJson } from "./common.ts";

export const MAX_METADATA_ENTRIES = 20;

const metadata = z
  .record(safeKey(100), z.string().max(500))
  .refine((m) => Object.keys(m).length <= MAX_METADATA_ENTRIES, `at most ${MAX_METADATA_ENTRIES} entries`);
const expression = z.string().min(1).max(4096);
const containers = z.array(containerSchema).length(1, "a token belongs to exactly one container");
const tokenData = z
  .unknown()
  .refine((v) => v !== undefined, "is required")
  .refine(
    (v) => dataSizeProblem(v) === undefined,
    `must serialize to at most ${MAX_DATA_BYTES} bytes of JSON`,
  );

export const createTokenBody = z.object({
  id: z.string().min(1).max(4096).optional(),
  type: z.enum(TOKEN_TYPE_NAMES),
  data: tokenData,
  mask: storedJson(MAX_MASK_BYTES).optional(),
  containers: containers.optional(),
  metadata: metadata.optional(),
  search_indexes: z.array(expression).max(10).optional(),
  fingerprint_expression: expression.optional(),
  deduplicate_token: z.boolean().optional(),
  expires_at: z.string().min(1).max(64).optional(),
});

/** Merge patch body: null clears a field (RFC 7386). */
export const patchTokenBody = z.object({
  data: z.unknown().optional(),
  mask: storedJson(MAX_MASK_BYTES).optional(),
  metadata: z.record(safeKey(100), z.string().max(500).nullable()).nullable().optional(),
  containers: containers.optional(),
  search_indexes: z.array(expression).max(10).nullable().optional(),
  fingerprint_expression: expression.nullable().optional(),
  deduplicate_token: z.boolean().nullable().optional(),
  expires_at: z.string().min(1).max(64).nullable().optional(),
});

export const listTokensQuery = pagingQuery()
  .extend({
    id: repeatable(z.string().min(1).max(400)),
    type: repeatable(z.string().min(1).max(100)),
  })
  .catchall(z.unknown());

export const tokenSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    type: z.string(),
    data: z.unknown().optional(),
    mask: storedJson(MAX_MASK_BYTES).optional(),
    fingerprint: z.string().optional().meta({
      description: "Only when the answer reveals the data (the caller could read the value anyway).",
    }),
    fingerprint_expression: z.string(),
    containers: z.array(z.string()),
    metadata: z.record(z.string(), z.string()).optional(),
    search_indexes: z.array(z.string()).optional(),
    expires_at: z.string().optional(),
    created_by: z.string().optional(),
    created_at: z.string(),
    modified_by: z.string().optional(),
    modified_at: z.string().optional(),
  })
  .meta({ id: "Token" });

export const transactionSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    created_by: z.string().optional(),
    expires_at: z.string(),
  })
  .meta({ id: "Transaction" });
