import type { Sealer } from "#shared/domain/crypto/sealer.ts";
import type { HoldDeps } from "#shared/domain/transactions.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import type { AuditLogStore, TokenStore } from "#shared/ports/stores.ts";
import type { ExpressionEngine } from "./expressions.ts";

/** What the token use cases need from outside the domain. */
export interface TokenDeps {
  tokens: TokenStore;
  /** A write that meets a held token asks whether its holder still may hold it (transactions.ts, releaseStaleHold). */
  transactions: HoldDeps["transactions"];
  authenticator: HoldDeps["authenticator"];
  auditLog: AuditLogStore;
  sealer: Sealer;
  expressions: ExpressionEngine;
  clock: Clock;
  /** Tokens created, read and detokenized (shared/observability/count-tokens.ts). */
  metrics: Metrics;
  /** On whose behalf (code's `req.svc` calls): said in every audit entry (audit-entry.ts). */
  auditContext?: string;
}
