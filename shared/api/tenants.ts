import {
  createdTenantSchema,
  createTenantBody,
  deletionReceiptSchema,
  kmsKeySchema,
  setKmsKeyBody,
  tenantSchema,
} from "#shared/schemas/tenants.ts";
import { problem, routeGroup } from "./group.ts";

/** Tenants: created with the root key; a key reads its own. */
export const tenantsRoutes = routeGroup("tenants", {
  createTenant: {
    method: "POST",
    path: "/tenants",
    auth: "root",
    summary: "Create a tenant with its owner and a management application (root key)",
    body: createTenantBody,
    responses: {
      201: { description: "Created; management_key is shown once", schema: createdTenantSchema },
    },
  },
  getSelfTenant: {
    method: "GET",
    path: "/tenants/self",
    auth: "key",
    permissions: ["tenant:read"],
    summary: "The caller's tenant",
    responses: { 200: { description: "Tenant", schema: tenantSchema } },
  },
  deleteSelfTenant: {
    method: "DELETE",
    path: "/tenants/self",
    auth: "key",
    permissions: ["tenant:delete"],
    summary:
      "Delete the caller's tenant for good (the OWNER member's own key): its keys are destroyed at once, every key and session answers 401, its items are purged within the hour",
    responses: {
      200: { description: "The deletion receipt, signed by the deployment", schema: deletionReceiptSchema },
      403: problem("The key is not the OWNER member's own management key, or lacks the permission"),
      503: problem("The deployment has no receipt signing key: nothing was deleted"),
    },
  },
  setSelfTenantKmsKey: {
    method: "PUT",
    path: "/tenants/self/keys/kms",
    auth: "key",
    permissions: ["tenant:key:update"],
    summary:
      "Bring your own KMS key (the OWNER member's own key): checked with a test GenerateDataKey/Decrypt, then every data key of the tenant is re-wrapped under it",
    body: setKmsKeyBody,
    responses: {
      200: { description: "The tenant's data keys are under this key", schema: kmsKeySchema },
      400: problem("Not a KMS key ARN, or the key cannot be used by this deployment for this tenant"),
      403: problem("The key is not the OWNER member's own management key, or lacks the permission"),
    },
  },
});
