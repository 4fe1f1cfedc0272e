import { elementsRoutes } from "#shared/api/elements.ts";
import type { Routes } from "#shared/api/index.ts";
import { sessionsRoutes } from "#shared/api/sessions.ts";
import { composeCore } from "#shared/composition/core.ts";
import { auditLogStore } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { authorizeSession, createSession } from "#shared/domain/sessions.ts";
import { createHttpHandler, type GroupHandlers } from "#shared/http/lambda.ts";
import { elementsHandlers } from "./elements.ts";

/** The adapters the sessions routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...auditLogStore(core) };
}
export type SessionsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "sessions", SessionsDeps> = {
  createSession: async ({ deps, principal }) => ({ status: 201, body: await createSession(deps, principal) }),
  authorizeSession: async ({ deps, principal, body }) => {
    await authorizeSession(deps, principal, body);
    return { status: 200 };
  },
  ...elementsHandlers,
};

export const handler = createHttpHandler(
  { ...sessionsRoutes, ...elementsRoutes } satisfies Partial<Routes>,
  "sessions",
  routes as GroupHandlers<typeof sessionsRoutes & typeof elementsRoutes, "sessions", SessionsDeps>,
  () => compose(config()),
);
