import type { Routes } from "#shared/api/index.ts";
import { reactorsRoutes } from "#shared/api/reactors.ts";
import { composeCore } from "#shared/composition/core.ts";
import { egress } from "#shared/composition/egress.ts";
import { sqsJobQueue } from "#shared/composition/job-queue.ts";
import { sandbox } from "#shared/composition/sandbox.ts";
import { reactorStore } from "#shared/composition/stores.ts";
import { tokenDomain } from "#shared/composition/token-domain.ts";
import { type Config, config } from "#shared/config.ts";
import {
  createFormula,
  createReactor,
  deleteFormula,
  deleteReactor,
  getFormula,
  getReactor,
  listFormulas,
  listReactors,
  patchReactor,
  replaceFormula,
  replaceReactor,
} from "#shared/domain/reactors/manage.ts";
import {
  checkReactionRead,
  ReactorError,
  react,
  reactAsync,
  reactionResult,
  webhookSecrets,
} from "#shared/domain/reactors/react.ts";
import { presentAgain } from "#shared/domain/tokens/replay.ts";
import { createHttpHandler, type GroupHandlers, type GroupReplays, replayAs } from "#shared/http/lambda.ts";
import { envelope, pageRequest } from "#shared/http/pagination.ts";
import { PROBLEM_CONTENT_TYPE } from "#shared/http/problem.ts";

/** The adapters the reactors routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return {
    ...core,
    ...tokenDomain(core),
    ...reactorStore(core),
    ...sandbox(core),
    ...egress(),
    ...sqsJobQueue(core),
  };
}
export type ReactorsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "reactors", ReactorsDeps> = {
  createFormula: async ({ deps, principal, body }) => ({
    status: 201,
    body: await createFormula(deps, principal, body),
  }),
  listFormulas: async ({ deps, principal, query }) => ({
    status: 200,
    body: envelope(await listFormulas(deps, principal, pageRequest(query)), query),
  }),
  getFormula: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getFormula(deps, principal, params.id),
  }),
  replaceFormula: async ({ deps, principal, params, body }) => ({
    status: 200,
    body: await replaceFormula(deps, principal, params.id, body),
  }),
  deleteFormula: async ({ deps, principal, params }) => {
    await deleteFormula(deps, principal, params.id);
    return { status: 204 };
  },
  createReactor: async ({ deps, principal, body }) => ({
    status: 201,
    body: await createReactor(deps, principal, body),
  }),
  listReactors: async ({ deps, principal, query }) => ({
    status: 200,
    body: envelope(
      await listReactors(deps, principal, { ids: query.id, name: query.name }, pageRequest(query)),
      query,
    ),
  }),
  getReactor: async ({ deps, principal, params }) => ({
    status: 200,
    body: await getReactor(deps, principal, params.id),
  }),
  replaceReactor: async ({ deps, principal, params, body }) => ({
    status: 200,
    body: await replaceReactor(deps, principal, params.id, body),
  }),
  patchReactor: async ({ deps, principal, params, body }) => {
    await patchReactor(deps, principal, params.id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.code !== undefined ? { code: body.code } : {}),
      ...(body.configuration !== undefined ? { configuration: body.configuration ?? {} } : {}),
      ...(body.application !== undefined ? { application: body.application } : {}),
    });
    return { status: 204 };
  },
  deleteReactor: async ({ deps, principal, params }) => {
    await deleteReactor(deps, principal, params.id);
    return { status: 204 };
  },
  react: async ({ deps, principal, params, body }) => {
    try {
      const reaction = await react(deps, principal, params.id, body);
      // Queued for a callback: 202 with the request id the webhook will carry.
      if (reaction.queued) return { status: 202, body: { request_id: reaction.requestId } };
      return { status: 200, body: reaction.reaction };
    } catch (error) {
      // A CustomHttpResponseError answers its own status, body and (filtered) headers; every other error is
      // problem+json.
      if (error instanceof ReactorError && error.customBody !== undefined)
        return { status: error.status, body: error.customBody, headers: error.customHeaders ?? {} };
      throw error;
    }
  },
  reactAsync: async ({ deps, principal, params, body }) => ({
    status: 202,
    body: { asyncReactorRequestId: await reactAsync(deps, principal, params.id, body) },
  }),
  getReactionResult: async ({ deps, principal, params }) => {
    const outcome = await reactionResult(deps, principal, params.id, params.requestId);
    const headers = outcome.problem ? { "content-type": PROBLEM_CONTENT_TYPE } : undefined;
    return { status: outcome.status, body: outcome.body, ...(headers ? { headers } : {}) };
  },
  getWebhookSecret: async ({ deps, principal }) => ({
    status: 200,
    body: { secret: await webhookSecrets(deps).secret(principal.tenantId) },
  }),
  rotateWebhookSecret: async ({ deps, principal }) => ({
    status: 200,
    body: { secret: await webhookSecrets(deps).rotate(principal) },
  }),
};

/**
 * A write whose answer was lost (it died after its effect) is answered with the formula or reactor as it is now.
 * A react or a webhook secret rotation whose answer was lost answers 409 (docs/reactors.md: what a reactor's
 * outbound calls do on a retry). Tokens a formula's code created are presented again as tokens' replays are.
 */
export const replays: GroupReplays<Routes, "reactors", ReactorsDeps> = {
  presentToken: presentAgain,
  checkRead: checkReactionRead,
  effects: {
    createFormula: replayAs("reactor_formula", "create", 201, ({ deps, principal }, id) =>
      getFormula(deps, principal, id),
    ),
    replaceFormula: replayAs("reactor_formula", "update", 200, ({ deps, principal }, id) =>
      getFormula(deps, principal, id),
    ),
    createReactor: replayAs("reactor", "create", 201, ({ deps, principal }, id) =>
      getReactor(deps, principal, id),
    ),
    replaceReactor: replayAs("reactor", "update", 200, ({ deps, principal }, id) =>
      getReactor(deps, principal, id),
    ),
    patchReactor: replayAs("reactor", "update", 204, async () => undefined),
  },
};

export const handler = createHttpHandler(
  reactorsRoutes,
  "reactors",
  routes,
  () => compose(config()),
  replays,
);
