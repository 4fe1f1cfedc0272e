import { uuidv7 } from "#shared/ids.ts";
import type { Actor, EntityType, LogEntry, Operation } from "./audit.ts";
import type { Principal } from "./entities.ts";

export function actorOf(principal: Principal): Actor {
  if (principal.kind === "root") return { type: "operator" };
  if (principal.kind === "session") return { type: "session", id: principal.session.id };
  return { type: "application", id: principal.application.id };
}

/** A log entry for one operation; `message` is written by the use case and never holds data or keys. */
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
