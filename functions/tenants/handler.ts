import type { Routes } from "#shared/api/index.ts";
import { tenantsRoutes } from "#shared/api/tenants.ts";
import { composeCore } from "#shared/composition/core.ts";
import { rootKeyVerifier } from "#shared/composition/root-key.ts";
import { auditLogStore, memberStore, tenantStore } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { createTenant, getOwnTenant } from "#shared/domain/tenants.ts";
import { createHttpHandler, type GroupHandlers } from "#shared/http/lambda.ts";

/** The adapters the tenants routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg, { rootKey: rootKeyVerifier });
  return { ...core, ...tenantStore(core), ...memberStore(core), ...auditLogStore(core) };
}
export type TenantsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "tenants", TenantsDeps> = {
  createTenant: async ({ deps, body }) => ({ status: 201, body: await createTenant(deps, body) }),
  getSelfTenant: async ({ deps, principal }) => ({ status: 200, body: await getOwnTenant(deps, principal) }),
};

export const handler = createHttpHandler(tenantsRoutes, "tenants", routes, () => compose(config()));
