/**
 * The one audit entry point (as Vault's audit broker: "a single ingest interface to auditable events"): use
 * cases say what happened, in a sentence; this module alone builds entries (who, which entity, which operation,
 * when) and writes the ones that are not part of a store's own transaction.
 *
 * Token data: every path on which a token's data (revealed, masked, or as a filter renders it) leaves the
 * service or is handed to code records one `read` entry per token through `recordTokenReads`, and goes on
 * only once that write has succeeded (fail closed): a read, a list, a PATCH or deduplication answer, a proxy's
 * and a reactor's detokenization (createDetokenizer takes this as its audit hook), the tokens a reactor's
 * code creates for its caller. Code's `req.svc` calls are the same use cases, so they log the same way.
 */
import { uuidv7 } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { AuditLogStore, RevocationAudit } from "#shared/ports/stores.ts";
import type { Actor, EntityType, LogEntry, Operation } from "./audit.ts";
import type { Principal, TenantPrincipal } from "./entities.ts";
import { auditEntityType, type TokenType } from "./tokens/types.ts";

export function actorOf(principal: Principal): Actor {
  if (principal.kind === "root") return { type: "operator" };
  if (principal.kind === "session") return { type: "session", id: principal.session.id };
  return { type: "application", id: principal.application.id };
}

/** Who did it: a tenant key's principal, or an actor acting in a tenant (the operator, the system, a proxy key). */
export type Who = TenantPrincipal | { tenantId: string; actor: Actor };

export interface AuditPorts {
  auditLog: Pick<AuditLogStore, "append">;
  clock: Clock;
  /** On whose behalf the use case runs, when not the caller's own request (`the code of reactor …`). */
  auditContext?: string;
}

/** A token as the log names it: its id, and its type (a card logs as `card`, a bank as `bank`, others `token`). */
export interface LoggedToken {
  id: string;
  type: TokenType;
}

/** A log entry built at `now`; `message` is written by the use case and never holds data or keys. */
export function auditEntry(
  now: Date,
  actor: Actor,
  fields: {
    tenantId: string;
    entityType: EntityType;
    entityId: string;
    operation: Operation;
    message: string;
  },
): LogEntry {
  return {
    id: uuidv7(now),
    tenant_id: fields.tenantId,
    ...(actor.id ? { actor_id: actor.id } : {}),
    actor_type: actor.type,
    entity_type: fields.entityType,
    entity_id: fields.entityId,
    operation: fields.operation,
    message: fields.message,
    created_at: now.toISOString(),
  };
}

const scopeOf = (who: Who) => ("actor" in who ? who : { tenantId: who.tenantId, actor: actorOf(who) });

/**
 * The entry for one operation on one entity, now: for writes that carry it into the store's transaction. With
 * an `auditContext` (code's `req.svc` calls), the message says on whose behalf it ran.
 */
export function auditEvent(
  deps: Pick<AuditPorts, "clock" | "auditContext">,
  who: Who,
  entityType: EntityType,
  entityId: string,
  operation: Operation,
  message: string,
): LogEntry {
  const { tenantId, actor } = scopeOf(who);
  const said = deps.auditContext ? `${message} (by ${deps.auditContext})` : message;
  return auditEntry(deps.clock.now(), actor, { tenantId, entityType, entityId, operation, message: said });
}

/**
 * The entries of keys revoked with their holder (`withWhat`: an application or member deleted): each key's own
 * history ends with its revocation, as one revoked by DELETE .../keys/{id} does (lifecycle review: they ended at
 * "create").
 */
export const keyRevocationEvents =
  (deps: Pick<AuditPorts, "clock" | "auditContext">, who: Who, withWhat: string): RevocationAudit =>
  (key) =>
    auditEvent(
      deps,
      who,
      "application_key",
      key.id,
      "delete",
      `Key of application ${key.applicationId} revoked with ${withWhat}`,
    );

/** The entry for an operation on a token (its entity type follows the token's type). */
export function tokenEvent(
  deps: Pick<AuditPorts, "clock" | "auditContext">,
  who: Who,
  token: LoggedToken,
  operation: Operation,
  message: string,
): LogEntry {
  return auditEvent(deps, who, auditEntityType(token.type), token.id, operation, message);
}

/** One `read` entry per token (each token once), saying how its data was used. */
export function tokenReadEvents(
  deps: Pick<AuditPorts, "clock" | "auditContext">,
  who: Who,
  tokens: readonly LoggedToken[],
  message: string,
): LogEntry[] {
  // One token (a read): nothing to de-duplicate.
  if (tokens.length === 1) return [tokenEvent(deps, who, tokens[0] as LoggedToken, "read", message)];
  const seen = new Set<string>();
  return tokens
    .filter((token) => !seen.has(token.id) && seen.add(token.id))
    .map((token) => tokenEvent(deps, who, token, "read", message));
}

const WRITTEN: Promise<void> = Promise.resolve();

/**
 * Writes entries not part of a store's transaction; resolves once written, so callers go on only then. The
 * store's own promise, not one more around it: every read of token data passes here.
 */
export function recordEvents(deps: Pick<AuditPorts, "auditLog">, entries: LogEntry[]): Promise<void> {
  return entries.length > 0 ? deps.auditLog.append(entries) : WRITTEN;
}

/**
 * Before token data leaves the service or is handed to code: one `read` entry per token (and any `also`
 * entries, in the same write). Rejects when they cannot be written; the caller then hands nothing on.
 */
export function recordTokenReads(
  deps: AuditPorts,
  who: Who,
  tokens: readonly LoggedToken[],
  message: string,
  also?: LogEntry[],
): Promise<void> {
  const reads = tokenReadEvents(deps, who, tokens, message);
  return recordEvents(deps, also?.length ? [...reads, ...also] : reads);
}
