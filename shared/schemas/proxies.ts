import * as z from "zod";
import { MAX_CONFIGURATION_BYTES } from "#shared/domain/crypto/sealed-configuration.ts";
import { allowedHosts, generatedId, pagingQuery, repeatable, safeKey, storable } from "./common.ts";

/**
 * Transform code is stored as given, both transforms and the configuration in the proxy's one item (DynamoDB
 * keeps at most 400 KB): 128 KB each is far beyond any sensible transform.
 */
const transform = z.object({
  code: z
    .string()
    .min(1)
    .max(128 * 1024),
});
const name = z.string().trim().min(1).max(200);
const destination = z.string().min(1).max(2048);
/**
 * Stored sealed in the record (its JSON, crypto/sealed-configuration.ts), within what DynamoDB could keep as a map,
 * at most 64 KiB (shared/domain/storable.ts): 64 KiB sealed is about 88 KiB of the item's 400 KB.
 */
const configuration = z.record(safeKey(200), z.unknown()).superRefine(storable(MAX_CONFIGURATION_BYTES));

export const proxyBody = z.object({
  name,
  destination_url: destination,
  request_transform: transform.optional(),
  response_transform: transform.optional(),
  application: z.object({ id: generatedId }).optional(),
  configuration: configuration.optional(),
  require_auth: z.boolean().optional(),
  allowed_hosts: allowedHosts.optional(),
});

export const patchProxyBody = z.object({
  name: name.optional(),
  destination_url: destination.optional(),
  request_transform: transform.nullable().optional(),
  response_transform: transform.nullable().optional(),
  application: z.object({ id: generatedId }).nullable().optional(),
  configuration: configuration.nullable().optional(),
  require_auth: z.boolean().optional(),
  allowed_hosts: allowedHosts.nullable().optional(),
});

export const listProxiesQuery = pagingQuery().extend({
  id: repeatable(z.string().min(1).max(100)),
  name: z.string().min(1).max(200).optional(),
});

export const proxySchema = z
  .object({
    id: z.string(),
    /** Only for a member's own key (docs/proxies.md). */
    key: z.string().optional(),
    name: z.string(),
    destination_url: z.string(),
    tenant_id: z.string(),
    require_auth: z.boolean(),
    request_transform: transform.optional(),
    response_transform: transform.optional(),
    application_id: z.string().optional(),
    configuration: configuration.optional(),
    allowed_hosts: z.array(z.string()).optional(),
    created_by: z.string().optional(),
    created_at: z.string(),
    modified_by: z.string().optional(),
    modified_at: z.string().optional(),
  })
  .meta({ id: "Proxy" });
