import { keysSchema, keyVersionParams, rewrapJobSchema, rewrapParams } from "#shared/schemas/keys.ts";
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
  listTenantKeys: {
    method: "GET",
    path: "/tenants/self/keys",
    auth: "key",
    permissions: ["tenant:key:read"],
    summary: "The tenant's data-key and HMAC versions, each with how many tokens need it",
    responses: { 200: { description: "Key versions", schema: keysSchema } },
  },
  rotateTenantKeys: {
    method: "POST",
    path: "/tenants/self/keys/rotate",
    auth: "key",
    permissions: ["tenant:key:update"],
    summary: "Make a new data-key version and a new HMAC version current",
    responses: {
      200: { description: "Key versions after the rotation", schema: keysSchema },
      409: problem("Another rotation changed the keys meanwhile"),
    },
  },
  startRewrap: {
    method: "POST",
    path: "/tenants/self/keys/rewrap",
    auth: "key",
    permissions: ["tenant:key:update"],
    summary: "Start re-sealing every token under the current key versions (a job, page by page)",
    responses: {
      202: { description: "The job, running", schema: rewrapJobSchema },
      409: problem("A rewrap of the tenant is running (the detail names it); one runs at a time"),
    },
  },
  getRewrap: {
    method: "GET",
    path: "/tenants/self/keys/rewrap/{id}",
    auth: "key",
    permissions: ["tenant:key:read"],
    summary: "A rewrap job's progress",
    params: rewrapParams,
    responses: {
      200: { description: "The job", schema: rewrapJobSchema },
      404: problem("Not found"),
    },
  },
  destroyKeyVersion: {
    method: "DELETE",
    path: "/tenants/self/keys/{version}",
    auth: "key",
    permissions: ["tenant:key:update"],
    summary: "Destroy a data-key version no token needs",
    params: keyVersionParams,
    responses: {
      204: { description: "Destroyed" },
      404: problem("Not found"),
      409: problem(
        "The current version, a version tokens, proxy keys or the webhook secret still need, one whose tokens were never counted, or one that stopped being current less than a day ago (the detail says from when)",
      ),
    },
  },
});
