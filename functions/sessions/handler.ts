import { routes } from "#shared/api/index.ts";
import { authorizeSession, createSession } from "#shared/domain/sessions.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";

export const handler = createHttpHandler(routes, "sessions", {
  createSession: async ({ deps, principal }) => ({ status: 201, body: await createSession(deps, principal) }),
  authorizeSession: async ({ deps, principal, body }) => {
    await authorizeSession(deps, principal, body);
    return { status: 200 };
  },
});
