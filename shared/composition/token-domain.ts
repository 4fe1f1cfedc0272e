import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { auditLogStore, tokenStores } from "./stores.ts";
import type { Table } from "./table.ts";

/**
 * The token domain (TokenDeps): its stores, the audit log and the expression engine (fingerprints, search
 * indexes; liquidjs and jsonpath-plus). Its own module, so functions that only move tokens (sweep,
 * transactions, the test clock) do not bundle the engine.
 */
export const tokenDomain = (core: Table) => ({
  ...tokenStores(core),
  ...auditLogStore(core),
  // Fingerprints stringify whole token data, so output may be as large as the largest data (64 KB).
  expressions: createExpressionEngine({ maxOutputChars: 256 * 1024 }),
});
