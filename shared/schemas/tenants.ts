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

export const deletionReceiptSchema = z
  .object({
    tenant_id: z.string(),
    deleted_at: z.string(),
    destroyed_key_versions: z.array(z.string()),
    purge_deadline: z.string(),
    signature: z
      .string()
      .describe("base64url; verify as docs/security.md shows, with GET /.well-known/svc-vault/receipt-key"),
  })
  .meta({ id: "DeletionReceipt" });

export const receiptKeySchema = z.object({
  algorithm: z.enum(["Ed25519", "ECDSA_P256_SHA256"]),
  key_id: z.string(),
  public_key_pem: z.string(),
});

/** A KMS key ARN (aliases are refused: what the key is must not change under the tenant's data keys). */
export const setKmsKeyBody = z.object({
  key_arn: z
    .string()
    .max(2048)
    .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]{1,64}$/, "a KMS key ARN"),
});

export const kmsKeySchema = z.object({
  key_arn: z.string(),
  set_at: z.string(),
  data_keys_rewrapped: z.number().int(),
});
