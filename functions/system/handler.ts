import { type Routes, routeList, routeTable } from "#shared/api/index.ts";
import { composeCore } from "#shared/composition/core.ts";
import { receiptSigner } from "#shared/composition/key-custody.ts";
import { rootKeyVerifier } from "#shared/composition/root-key.ts";
import { sweepStore, tokenStores } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { notFound } from "#shared/domain/errors.ts";
import { notReady, readiness } from "#shared/domain/readiness.ts";
import { sweepExpired } from "#shared/domain/tokens/sweep.ts";
import { createHttpHandler, type GroupHandlers } from "#shared/http/lambda.ts";
import { openApiDocument } from "#shared/openapi.ts";

/** Health, the OpenAPI document, the local test clock, and API Gateway's $default route (unknown paths). */
/** The adapters the system routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg, { rootKey: rootKeyVerifier });
  return { ...core, ...tokenStores(core), ...sweepStore(core), receiptSigner: receiptSigner(cfg) };
}
export type SystemDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "system", SystemDeps> = {
  // Ready only while the store answers and the keys work: a load balancer or supervisor stops sending work to a
  // vault that would answer 503 (store) or 500 (keys) to all of it.
  healthz: async ({ deps }) => {
    const checks = await readiness(deps);
    if (checks.store !== "ok" || checks.keys !== "ok") throw notReady(checks);
    return { status: 200, body: { status: "ok", checks } };
  },
  openapi: async () => ({ status: 200, body: openApiDocument(routeList) }),
  receiptKey: async ({ deps }) => ({ status: 200, body: await deps.receiptSigner.publicKey() }),
  advanceTestClock: async ({ deps, body }) => {
    // The route exists everywhere but only answers where SVC_TEST_CLOCK=1 (local mode only).
    if (!deps.testClock) throw notFound("The route POST /_test/clock");
    const now = deps.testClock.advance(body.advance_seconds).toISOString();
    // Expiry follows the clock at once: the sweep runs now rather than at its next tick.
    const sweep = await sweepExpired(deps);
    return { status: 200, body: { now, sweep } };
  },
};

export const handler = createHttpHandler(routeTable, "system", routes, () => compose(config()));
