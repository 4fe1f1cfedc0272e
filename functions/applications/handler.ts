import { routes } from "#shared/api/index.ts";
import {
  createApplication,
  createApplicationKey,
  deleteApplication,
  deleteApplicationKey,
  getApplication,
  getApplicationKey,
  getOwnApplication,
  listApplicationKeys,
  listApplications,
  updateApplication,
} from "#shared/domain/applications.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

export const handler = createHttpHandler(routes, "applications", {
  createApplication: async ({ deps, principal, body }) => ({
    status: 201,
    body: await createApplication(deps, principal, body),
  }),
  listApplications: async ({ deps, principal, query }) => ({
    status: 200,
    body: envelope(await listApplications(deps, principal, pageRequest(query)), query),
  }),
  getOwnApplication: async ({ deps, principal }) => ({
    status: 200,
    body: await getOwnApplication(deps, principal),
  }),
  getApplication: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getApplication(deps, principal, params.id),
  }),
  updateApplication: async ({ deps, principal, params, body }) => ({
    status: 200,
    body: await updateApplication(deps, principal, params.id, body),
  }),
  deleteApplication: async ({ deps, principal, params }) => {
    await deleteApplication(deps, principal, params.id);
    return { status: 204 };
  },
  createApplicationKey: async ({ deps, principal, params }) => ({
    status: 201,
    body: await createApplicationKey(deps, principal, params.id),
  }),
  listApplicationKeys: async ({ deps, principal, params }) => ({
    status: 200,
    body: await listApplicationKeys(deps, principal, params.id),
  }),
  getApplicationKey: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getApplicationKey(deps, principal, params.id, params.keyId),
  }),
  deleteApplicationKey: async ({ deps, principal, params }) => {
    await deleteApplicationKey(deps, principal, params.id, params.keyId);
    return { status: 204 };
  },
});
