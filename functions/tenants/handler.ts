import type { Routes } from "#shared/api/index.ts";
import { tenantsRoutes } from "#shared/api/tenants.ts";
import { composeCore } from "#shared/composition/core.ts";
import { receiptSigner } from "#shared/composition/key-custody.ts";
import { keyCustody } from "#shared/composition/keys.ts";
import { rootKeyVerifier } from "#shared/composition/root-key.ts";
import {
  auditLogStore,
  memberStore,
  proxyStore,
  reactorStore,
  tenantStore,
} from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { setTenantKmsKey } from "#shared/domain/key-custody.ts";
import { destroyKeyVersion, listKeys, rotateKeys } from "#shared/domain/keys/key-versions.ts";
import { getRewrap, startRewrap } from "#shared/domain/keys/rewrap.ts";
import { deleteOwnTenant } from "#shared/domain/tenant-deletion.ts";
import { createTenant, getOwnTenant } from "#shared/domain/tenants.ts";
import { createHttpHandler, type GroupHandlers } from "#shared/http/lambda.ts";

/** The adapters the tenants routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg, { rootKey: rootKeyVerifier });
  return {
    ...core,
    ...tenantStore(core),
    ...memberStore(core),
    ...auditLogStore(core),
    receiptSigner: receiptSigner(cfg),
    ...keyCustody(core),
    // A key version is destroyed only once no proxy key or configuration, reactor configuration nor webhook
    // secret is sealed under it.
    ...proxyStore(core),
    ...reactorStore(core),
  };
}
export type TenantsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "tenants", TenantsDeps> = {
  createTenant: async ({ deps, body }) => ({ status: 201, body: await createTenant(deps, body) }),
  getSelfTenant: async ({ deps, principal }) => ({ status: 200, body: await getOwnTenant(deps, principal) }),
  deleteSelfTenant: async ({ deps, principal }) => ({
    status: 200,
    body: await deleteOwnTenant(deps, principal),
  }),
  setSelfTenantKmsKey: async ({ deps, principal, body }) => ({
    status: 200,
    body: await setTenantKmsKey(deps, principal, body.key_arn),
  }),
  listTenantKeys: async ({ deps, principal }) => ({ status: 200, body: await listKeys(deps, principal) }),
  rotateTenantKeys: async ({ deps, principal }) => ({ status: 200, body: await rotateKeys(deps, principal) }),
  startRewrap: async ({ deps, principal }) => ({ status: 202, body: await startRewrap(deps, principal) }),
  getRewrap: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getRewrap(deps, principal, params.id),
  }),
  destroyKeyVersion: async ({ deps, principal, params }) => {
    await destroyKeyVersion(deps, principal, params.version);
    return { status: 204 };
  },
};

export const handler = createHttpHandler(tenantsRoutes, "tenants", routes, () => compose(config()));
