import { createdTenantSchema, createTenantBody, tenantSchema } from "#shared/schemas/tenants.ts";
import { routeGroup } from "./group.ts";

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
});
