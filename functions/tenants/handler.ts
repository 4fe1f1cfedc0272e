import { routes } from "#shared/api/index.ts";
import { createTenant, getOwnTenant } from "#shared/domain/tenants.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";

export const handler = createHttpHandler(routes, "tenants", {
  createTenant: async ({ deps, body }) => ({ status: 201, body: await createTenant(deps, body) }),
  getSelfTenant: async ({ deps, principal }) => ({ status: 200, body: await getOwnTenant(deps, principal) }),
});
