import { createExpressionEngine } from "#shared/domain/tokens/expressions.ts";
import { type RenderMeter, RenderScheduler } from "#shared/domain/tokens/render-budget.ts";
import { auditLogStore, tokenStores } from "./stores.ts";
import type { Table } from "./table.ts";

export interface TokenDomainOptions {
  /** What measures render time (default: the process's CPU time); tests inject one that counts work. */
  renderMeter?: RenderMeter;
}

/**
 * The token domain (TokenDeps): its stores, the audit log and the expression engine (fingerprints, search
 * indexes; liquidjs and jsonpath-plus). Its own module, so functions that only move tokens (sweep,
 * transactions, the test clock) do not bundle the engine. The engine's renders go through the process's one
 * scheduler: each request's budget and each tenant's share (render-budget.ts; the HTTP handler scopes them).
 */
export const tokenDomain = (core: Table, options: TokenDomainOptions = {}) => {
  const scheduler = new RenderScheduler(core.config.renderLimits, core.clock, options.renderMeter);
  return {
    ...tokenStores(core),
    ...auditLogStore(core),
    // Fingerprints stringify whole token data, so output may be as large as the largest data (64 KB).
    expressions: createExpressionEngine(
      { maxOutputChars: 256 * 1024, renderLimitMs: core.config.renderLimits.renderMs },
      { scheduler, ...(options.renderMeter ? { meter: options.renderMeter } : {}) },
    ),
  };
};
