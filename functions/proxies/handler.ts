import type { Routes } from "#shared/api/index.ts";
import { proxiesRoutes } from "#shared/api/proxies.ts";
import { composeCore } from "#shared/composition/core.ts";
import { sandbox } from "#shared/composition/sandbox.ts";
import { auditLogStore, proxyStore } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import {
  createProxy,
  deleteProxy,
  getProxy,
  listProxies,
  patchProxy,
  replaceProxy,
  rotateProxyKey,
} from "#shared/domain/proxies/manage.ts";
import { createHttpHandler, type GroupHandlers, type GroupReplays, replayAs } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

/** The adapters the proxies routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...proxyStore(core), ...auditLogStore(core), ...sandbox(core) };
}
export type ProxiesDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "proxies", ProxiesDeps> = {
  createProxy: async ({ deps, principal, body }) => ({
    status: 201,
    body: await createProxy(deps, principal, body),
  }),
  listProxies: async ({ deps, principal, query }) => ({
    status: 200,
    body: envelope(
      await listProxies(deps, principal, { ids: query.id, name: query.name }, pageRequest(query)),
      query,
    ),
  }),
  getProxy: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getProxy(deps, principal, params.id),
  }),
  replaceProxy: async ({ deps, principal, params, body }) => ({
    status: 200,
    body: await replaceProxy(deps, principal, params.id, body),
  }),
  patchProxy: async ({ deps, principal, params, body }) => {
    await patchProxy(deps, principal, params.id, body);
    return { status: 204 };
  },
  rotateProxyKey: async ({ deps, principal, params }) => ({
    status: 200,
    body: await rotateProxyKey(deps, principal, params.id),
  }),
  deleteProxy: async ({ deps, principal, params }) => {
    await deleteProxy(deps, principal, params.id);
    return { status: 204 };
  },
};

/** A write whose answer was lost (it died after its effect) is answered with the proxy as it is now. */
export const replays: GroupReplays<Routes, "proxies", ProxiesDeps> = {
  effects: {
    createProxy: replayAs("proxy", "create", 201, ({ deps, principal }, id) => getProxy(deps, principal, id)),
    replaceProxy: replayAs("proxy", "update", 200, ({ deps, principal }, id) =>
      getProxy(deps, principal, id),
    ),
    patchProxy: replayAs("proxy", "update", 204, async () => undefined),
    // A retried rotation (same idempotency key) answers the key the first one made, never a third.
    rotateProxyKey: replayAs("proxy", "update", 200, ({ deps, principal }, id) =>
      getProxy(deps, principal, id),
    ),
  },
};

export const handler = createHttpHandler(proxiesRoutes, "proxies", routes, () => compose(config()), replays);
