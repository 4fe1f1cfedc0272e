import { routes } from "#shared/api/index.ts";
import { commitTransaction, openTransaction, rollbackTransaction } from "#shared/domain/transactions.ts";
import { createHttpHandler } from "#shared/http/lambda.ts";

/** Transactions (beta): no permission needed beyond a key of the tenant. Commit and rollback answer 200, empty. */
export const handler = createHttpHandler(routes, "transactions", {
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
});
