import { notFound } from "#shared/domain/errors.ts";
import { hashKey, newApiKey, uuidv7 } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { AuditLogStore, TenantStore } from "#shared/ports/stores.ts";
import { auditEvent, recordEvents } from "./audit-entry.ts";
import type { Application, Tenant, TenantMember, TenantPrincipal, User } from "./entities.ts";
import { MANAGEMENT_PERMISSIONS } from "./permissions.ts";

export interface TenantDeps {
  tenants: TenantStore;
  auditLog: AuditLogStore;
  clock: Clock;
}

export interface CreateTenantInput {
  name: string;
  owner?: { email?: string; first_name?: string; last_name?: string };
}

/**
 * Creates a tenant, its OWNER member and a management application holding every management permission,
 * all in one transaction. The management key is returned once and stored only as a hash.
 */
export async function createTenant(deps: TenantDeps, input: CreateTenantInput) {
  const now = deps.clock.now();
  const at = now.toISOString();
  const tenantId = uuidv7(now);
  const owner: User = { id: uuidv7(now), ...input.owner };
  const member: TenantMember = {
    id: uuidv7(now),
    tenant_id: tenantId,
    role: "OWNER",
    user: owner,
    created_at: at,
  };
  const tenant: Tenant = { id: tenantId, name: input.name, owner_id: owner.id, created_at: at };
  const application: Application = {
    id: uuidv7(now),
    tenant_id: tenantId,
    name: `${input.name} management`,
    type: "management",
    permissions: [...MANAGEMENT_PERMISSIONS],
    rules: [],
    member_id: member.id,
    created_at: at,
  };
  const managementKey = newApiKey("management");
  const keyId = uuidv7(now);
  const who = { tenantId, actor: { type: "operator" as const } };
  await deps.tenants.createTenant({
    tenant,
    owner,
    member,
    application,
    key: {
      id: keyId,
      tenant_id: tenantId,
      application_id: application.id,
      created_at: at,
      key_hash: hashKey(managementKey),
    },
    audit: [
      auditEvent(deps, who, "tenant", tenantId, "create", "Tenant created"),
      auditEvent(deps, who, "tenant_member", member.id, "create", "Owner member created"),
      auditEvent(
        deps,
        who,
        "application",
        application.id,
        "create",
        "Management application created with the tenant",
      ),
    ],
  });
  return { ...tenant, management_key: managementKey, management_application_id: application.id };
}

export async function getOwnTenant(deps: TenantDeps, principal: TenantPrincipal): Promise<Tenant> {
  const tenant = await deps.tenants.getTenant(principal.tenantId);
  if (!tenant) throw notFound("The tenant");
  await recordEvents(deps, [auditEvent(deps, principal, "tenant", tenant.id, "read", "Tenant read")]);
  return tenant;
}
