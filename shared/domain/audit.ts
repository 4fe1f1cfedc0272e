/** Audit log entries: who did what to which entity. They never hold data, keys or secrets. */
export const ENTITY_TYPES = {
  application: "Application",
  bank: "Bank",
  card: "Card",
  proxy: "Proxy",
  reactor: "Reactor",
  reactor_formula: "Reactor Formula",
  session: "Session",
  tenant: "Tenant",
  tenant_member: "Tenant Member",
  tenant_invitation: "Tenant Invitation",
  tenant_key: "Tenant Key",
  token: "Token",
  transaction: "Transaction",
  application_key: "Application Key",
} as const;

export type EntityType = keyof typeof ENTITY_TYPES;
export type Operation = "create" | "read" | "update" | "delete" | "invoke";

export interface Actor {
  id?: string;
  type: "application" | "user" | "session" | "operator" | "system" | "proxy_key";
}

export interface LogEntry {
  id: string;
  tenant_id: string;
  actor_id?: string;
  actor_type?: string;
  entity_type: EntityType;
  entity_id: string;
  operation: Operation;
  message: string;
  created_at: string;
}

export interface LogQuery {
  entityType?: string;
  entityId?: string;
  startDate?: string;
  endDate?: string;
}

export function entityTypeList(): { display_name: string; value: string }[] {
  return Object.entries(ENTITY_TYPES)
    .map(([value, display_name]) => ({ display_name, value }))
    .sort((a, b) => a.value.localeCompare(b.value));
}
