import type { Config } from "#shared/config.ts";
import type { CallbackDeps } from "#shared/domain/reactors/callbacks.ts";
import { reactionRunner } from "#shared/domain/reactors/queued-run.ts";
import { type ReactDeps, webhookSecrets } from "#shared/domain/reactors/react.ts";
import { reactionFailures } from "#shared/http/problem.ts";
import type { Egress } from "#shared/ports/egress.ts";
import type { AuditLogStore, IdempotencyStore } from "#shared/ports/stores.ts";

/** What the callback path is built from: the reactors group's deps plus the audit log and this service's hosts. */
export type CallbackSources = ReactDeps & {
  egress: Egress;
  auditLog: Pick<AuditLogStore, "append">;
  /** A queued run's writes record their effect on a claim of its own (never run twice: reactionRunner). */
  idempotency: Pick<IdempotencyStore, "claim" | "release">;
  config: Pick<Config, "proxyAllowPrivate">;
  selfHosts: readonly string[];
};

/**
 * The deps of one callback delivery (processCallbackJob): the reaction runner and webhook secrets of the
 * reactors domain, delivered under the proxies' SSRF rules. The SQS consumer and the local job queue both
 * use this.
 */
export function callbackDeps(sources: CallbackSources): CallbackDeps {
  return {
    runner: reactionRunner(sources, reactionFailures, sources.idempotency),
    failures: reactionFailures,
    webhookSecrets: webhookSecrets(sources),
    auditLog: sources.auditLog,
    clock: sources.clock,
    egress: sources.egress,
    delivery: { allowPrivate: sources.config.proxyAllowPrivate, selfHosts: sources.selfHosts },
  };
}
