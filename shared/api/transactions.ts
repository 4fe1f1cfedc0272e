import { idParams } from "#shared/schemas/common.ts";
import { transactionSchema } from "#shared/schemas/tokens.ts";
import { problem, routeGroup } from "./group.ts";

/** Transactions (beta): token writes that apply at once. */
export const transactionsRoutes = routeGroup("transactions", {
  openTransaction: {
    method: "POST",
    path: "/transactions",
    auth: "key",
    summary: "Open a transaction (beta); token writes join it with SVC-TRANSACTION-ID",
    responses: { 201: { description: "Open transaction", schema: transactionSchema } },
  },
  commitTransaction: {
    method: "POST",
    path: "/transactions/{id}/commit",
    auth: "key",
    summary: "Apply every operation of the transaction at once",
    params: idParams,
    responses: {
      200: { description: "Committed (empty body)" },
      404: problem("Unknown or finished"),
    },
  },
  rollbackTransaction: {
    method: "POST",
    path: "/transactions/{id}/rollback",
    auth: "key",
    summary: "Discard every operation of the transaction",
    params: idParams,
    responses: {
      200: { description: "Rolled back (empty body)" },
      404: problem("Unknown or finished"),
    },
  },
});
