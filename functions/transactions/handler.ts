import type { Routes } from "#shared/api/index.ts";
import { transactionsRoutes } from "#shared/api/transactions.ts";
import { composeCore } from "#shared/composition/core.ts";
import { auditLogStore, tokenStores } from "#shared/composition/stores.ts";
import { type Config, config } from "#shared/config.ts";
import { commitTransaction, openTransaction, rollbackTransaction } from "#shared/domain/transactions.ts";
import { createHttpHandler, type GroupHandlers } from "#shared/http/lambda.ts";

/** Transactions (beta): no permission needed beyond a key of the tenant. Commit and rollback answer 200, empty. */
/** The adapters the transactions routes use, and no others (see shared/composition/). */
export function compose(cfg: Config) {
  const core = composeCore(cfg);
  return { ...core, ...tokenStores(core), ...auditLogStore(core) };
}
export type TransactionsDeps = ReturnType<typeof compose>;

export const routes: GroupHandlers<Routes, "transactions", TransactionsDeps> = {
  openTransaction: async ({ deps, principal }) => ({
    status: 201,
    body: await openTransaction(deps, principal),
  }),
  commitTransaction: async ({ deps, principal, params }) => {
    await commitTransaction(deps, principal, params.id);
    return { status: 200 };
  },
  rollbackTransaction: async ({ deps, principal, params }) => {
    await rollbackTransaction(deps, principal, params.id);
    return { status: 200 };
  },
};

export const handler = createHttpHandler(transactionsRoutes, "transactions", routes, () => compose(config()));
