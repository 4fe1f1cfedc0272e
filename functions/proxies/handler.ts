import { routes } from "#shared/api/index.ts";
import {
  createProxy,
  deleteProxy,
  getProxy,
  listProxies,
  patchProxy,
  replaceProxy,
} from "#shared/domain/proxies/manage.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

export const handler = createHttpHandler(routes, "proxies", {
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
  deleteProxy: async ({ deps, principal, params }) => {
    await deleteProxy(deps, principal, params.id);
    return { status: 204 };
  },
});
