import * as z from "zod";
import { dataSizeProblem, MAX_MASK_BYTES } from "#shared/domain/tokens/token.ts";
import { TOKEN_TYPE_NAMES } from "#shared/domain/tokens/types.ts";
import { containerSchema } from "./applications.ts";
import { MAX_PAGE_SIZE, pagingQuery, repeatable, safeKey, storedJson } from "./common.ts";

export const MAX_METADATA_ENTRIES = 20;

const metadata = z
  .record(safeKey(100), z.string().max(500))
  .refine((m) => Object.keys(m).length <= MAX_METADATA_ENTRIES, `at most ${MAX_METADATA_ENTRIES} entries`);
const expression = z.string().min(1).max(4096);
const containers = z.array(containerSchema).length(1, "a token belongs to exactly one container");
const tokenData = z
  .unknown()
  .refine((v) => v !== undefined, "is required")
  .superRefine((v, ctx) => {
    // Its size or its depth (more than 64 KiB of JSON, or deeper than a body may nest), as sealData says.
    const problem = dataSizeProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

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

/**
 * POST /tokenize: a token request, an array of them, or an object whose values are token requests (nested). Each
 * request is checked against createTokenBody by the domain, which names a failing one by its path.
 */
export const tokenizeBody = z
  .union([createTokenBody, z.array(z.unknown()), z.record(z.string(), z.unknown())])
  .meta({
    description:
      "A token request (as POST /tokens takes), an array of them, or an object whose values are token requests, nested; a bare string, number or boolean in their place is tokenized as a `token` and answered as its id; at most 250 requests.",
  });

/** The same shape, each request replaced by its token. */
export const tokenizeAnswer = z.unknown().meta({
  description:
    'The body\'s shape, each token request replaced by its token as POST /tokens answers it, and each bare value by its token\'s id. In an idempotent replay, a token deleted or changed since the first answer is answered as `{id, created_at, replay: "gone" | "changed"}` (nothing of what it holds now; read it to see it).',
});

/** POST /detokenize: any JSON; its strings' `{{ <id> }}` / `{{ token: <id> | filters }}` are replaced. */
export const detokenizeBody = z.unknown().meta({
  description:
    "Any JSON. A string that is exactly one expression becomes the token's data (as token:read shows it); expressions inside longer strings are replaced by their text. At most 100 tokens.",
});

export const detokenizeAnswer = z.unknown().meta({
  description: "The body with every expression replaced.",
});

/** GET /v2/tokens: the hosted vault's query (`metadata` is a JSON object), plus `metadata.<key>=value`. */
export const listTokensV2Query = z
  .object({
    size: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_SIZE, { message: `size must be at most ${MAX_PAGE_SIZE}` })
      .default(20),
    start: z.string().min(1).max(4096).optional(),
    type: repeatable(z.string().min(1).max(100)),
    container: z.string().min(1).max(400).optional(),
    fingerprint: z.string().min(1).max(200).optional(),
    metadata: z.string().min(2).max(16_384).optional().meta({
      description: 'A JSON object of metadata to match, e.g. {"customer":"c-1"} (case-insensitive).',
    }),
  })
  .catchall(z.unknown());

export const searchTokensBody = z.object({
  query: z.string().min(1).max(1024).meta({
    description:
      'One term — data:<value> (equal to one of a token\'s search_indexes), fingerprint:, type:, container:, metadata.<key>: — optionally "AND container:<container>"; quote values holding spaces.',
  }),
  size: z.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  start: z.string().min(1).max(4096).optional(),
});

export const cursorPage = <T extends z.ZodType>(item: T) =>
  z.object({
    pagination: z
      .object({ page_size: z.number().int(), next: z.string().optional() })
      .meta({ id: "CursorPagination" }),
    data: z.array(item),
  });
