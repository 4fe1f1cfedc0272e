import { applicationsRoutes } from "#shared/api/applications.ts";
import type { Routes } from "#shared/api/index.ts";
import { composeCore } from "#shared/composition/core.ts";
import { applicationStore, auditLogStore } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
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
import { createHttpHandler, type GroupHandlers, type GroupReplays, replayAs } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";

/** The adapters the applications routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...applicationStore(core), ...auditLogStore(core) };
}
export type ApplicationsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "applications", ApplicationsDeps> = {
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
};

/**
 * A write whose answer was lost (it died after its effect) is answered with the application as it is now; a key
 * shown once is not shown again (only its hash is kept): the caller adds a key. A lost key creation answers 409.
 */
export const replays: GroupReplays<Routes, "applications", ApplicationsDeps> = {
  effects: {
    createApplication: replayAs("application", "create", 201, ({ deps, principal }, id) =>
      getApplication(deps, principal, id),
    ),
    updateApplication: replayAs("application", "update", 200, ({ deps, principal }, id) =>
      getApplication(deps, principal, id),
    ),
  },
};

export const handler = createHttpHandler(
  applicationsRoutes,
  "applications",
  routes,
  () => compose(config()),
  replays,
);
