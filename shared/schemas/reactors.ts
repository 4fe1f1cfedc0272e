import * as z from "zod";
import { MAX_CONFIGURATION_BYTES } from "#shared/domain/crypto/sealed-configuration.ts";
import { allowedHosts, generatedId, idParams, pagingQuery, repeatable, safeKey, storable } from "./common.ts";

const name = z.string().trim().min(1).max(200);
const parameterName = safeKey(200);
const scalarType = z.enum(["string", "number", "boolean"]);

const code = z
  .string()
  .min(1)
  .max(256 * 1024);

export const formulaBody = z.object({
  name,
  description: z.string().max(1000).optional(),
  type: z.literal("private").default("private"),
  code,
  configuration: z
    .array(z.object({ name: parameterName, type: scalarType, description: z.string().max(1000).optional() }))
    .max(50)
    .default([]),
  request_parameters: z
    .array(
      z.object({
        name: parameterName,
        type: scalarType,
        description: z.string().max(1000).optional(),
        optional: z.boolean().default(false),
      }),
    )
    .max(100)
    .default([]),
  allowed_hosts: allowedHosts.optional(),
});

/**
 * Stored sealed in the record (its JSON, crypto/sealed-configuration.ts), within what DynamoDB could keep as a map,
 * at most 64 KiB (shared/domain/storable.ts): 64 KiB sealed is about 88 KiB of the item's 400 KB.
 */
const configuration = z.record(safeKey(200), z.unknown()).superRefine(storable(MAX_CONFIGURATION_BYTES));
const application = z.object({ id: generatedId });

/** Either `formula.id` or the reactor's own `code` (the hosted vault's current shape), never both (400). */
export const createReactorBody = z.object({
  name,
  configuration: configuration.default({}),
  formula: z.object({ id: generatedId }).optional(),
  code: code.optional(),
  application: application.optional(),
});

/**
 * formula.id is accepted only on create (spec): PUT and PATCH refuse it, like any unknown field. `code` replaces
 * the own code of a reactor that has one (400 on a formula's reactor).
 */
export const replaceReactorBody = z.strictObject({
  name,
  configuration: configuration.default({}),
  code: code.optional(),
  application: application.nullable().optional(),
});

export const patchReactorBody = z.strictObject({
  name: name.optional(),
  configuration: configuration.nullable().optional(),
  code: code.optional(),
  application: application.nullable().optional(),
});

export const reactBody = z.object({
  args: z.unknown().optional(),
  callback_url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  timeout_ms: z.number().int().min(10_000).max(210_000).optional(),
});

/** The hosted vault's react-async body: args only (no callback: the result is fetched). */
export const reactAsyncBody = z.object({ args: z.unknown().optional() });

export const asyncReactionSchema = z
  .object({ asyncReactorRequestId: z.string() })
  .meta({ id: "AsyncReactorResponse" });

export const resultParams = idParams.extend({ requestId: z.string().min(1).max(100) });

export const listReactorsQuery = pagingQuery().extend({
  id: repeatable(z.string().min(1).max(100)),
  name: z.string().min(1).max(200).optional(),
});

const parameterSchema = z.object({
  name: z.string(),
  type: z.string(),
  description: z.string().optional(),
  optional: z.boolean().optional(),
});

export const formulaSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    description: z.string().optional(),
    type: z.literal("private"),
    code: z.string(),
    configuration: z.array(parameterSchema),
    request_parameters: z.array(parameterSchema),
    allowed_hosts: z.array(z.string()).optional(),
    created_at: z.string(),
  })
  .meta({ id: "ReactorFormula" });

export const reactorSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    formula: formulaSchema.partial().extend({ id: z.string() }).optional(),
    code: z.string().optional(),
    configuration: configuration,
    application: application.optional(),
    created_at: z.string(),
  })
  .meta({ id: "Reactor" });

export const reactionSchema = z
  .object({ tokens: z.unknown().optional(), raw: z.unknown().optional() })
  .meta({ id: "ReactorResponse" });
