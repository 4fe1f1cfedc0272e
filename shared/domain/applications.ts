import { forbidden, notFound, validationError } from "#shared/domain/errors.ts";
import { hashKey, type KeyKind, newApiKey, uuidv7 } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { ApplicationStore, AuditLogStore, PageRequest, StoredKey } from "#shared/ports/stores.ts";
import { type AccessRule, ruleSetErrors } from "./access-rules.ts";
import { auditEvent, keyRevocationEvents, recordEvents } from "./audit-entry.ts";
import type { Authenticator } from "./authentication.ts";
import type { Application, ApplicationKey, TenantPrincipal } from "./entities.ts";
import {
  assertMayActAs,
  ceilingOf,
  isMemberBound,
  mintingApplicationOf,
  mintingChainOf,
  mintingMemberOf,
  widerThan,
} from "./grant-ceiling.ts";
import { type ApplicationType, disallowedPermissions, type Permission } from "./permissions.ts";

export interface ApplicationDeps {
  applications: ApplicationStore;
  auditLog: AuditLogStore;
  authenticator: Authenticator;
  clock: Clock;
}

const KEY_KIND: Record<ApplicationType, KeyKind> = {
  public: "public",
  private: "private",
  management: "management",
};

interface AccessInput {
  type: ApplicationType;
  permissions: Permission[];
  rules: AccessRule[];
}

/** Per-type permission and rule invariants; every violation becomes a 400 with field errors. */
function assertValidAccess(input: AccessInput): void {
  const errors: Record<string, string[]> = {};
  const refused = disallowedPermissions(input.type, input.permissions);
  if (refused.length > 0)
    errors.permissions = refused.map((p) => `A ${input.type} application cannot hold ${p}.`);
  Object.assign(errors, ruleSetErrors(input.rules, { type: input.type, allowConditions: false }));
  if (Object.keys(errors).length > 0) throw validationError("The application's access is invalid.", errors);
}

/** 403 unless the caller holds everything `input` grants (grant-ceiling.ts defines "no wider"). */
function assertWithinCeiling(
  principal: TenantPrincipal,
  input: { permissions: Permission[]; rules: AccessRule[] },
) {
  const ceiling = ceilingOf(principal);
  if (!ceiling) return;
  const problems = widerThan(ceiling, input);
  if (problems.length > 0)
    throw forbidden("A key can only grant permissions and token access it holds itself.", {
      permissions: problems,
    });
}

/**
 * Who may change an application, add or revoke its keys, or delete it: a member's own management application only
 * through its own keys, and any application only a caller whose ceiling covers everything it holds now. Taking
 * access away from an application is acting for it as much as granting it (grant-ceiling.ts).
 */
function assertMayManage(principal: TenantPrincipal, application: Application, action: string) {
  if (isMemberBound(application) && principal.application.id !== application.id)
    throw forbidden(`Only its own keys may ${action} a member's own management application.`);
  assertMayActAs(principal, application, action);
}

function newKey(
  deps: ApplicationDeps,
  principal: TenantPrincipal,
  application: Application,
): { stored: StoredKey; key: string } {
  const key = newApiKey(KEY_KIND[application.type]);
  const mintedBy = mintingMemberOf(principal);
  const mintedThrough = mintingApplicationOf(principal);
  // Each application once, and never the one it was minted through itself: a key rotating itself (or two
  // applications' keys minting each other's) would otherwise add an entry per rotation until liveKey refuses it.
  const chain = [...new Set(mintingChainOf(principal))].filter((id) => id !== mintedThrough);
  const stored: StoredKey = {
    id: uuidv7(deps.clock.now()),
    tenant_id: application.tenant_id,
    application_id: application.id,
    created_at: deps.clock.now().toISOString(),
    key_hash: hashKey(key),
    ...(mintedBy ? { minted_by: mintedBy } : {}),
    ...(mintedThrough ? { minted_through: mintedThrough } : {}),
    ...(mintedThrough && chain.length ? { minted_chain: chain } : {}),
  };
  return { stored, key };
}

/** As answered: applications stored before `allowed_origins` existed list none. */
const present = <A extends Application>(application: A) => ({
  ...application,
  allowed_origins: application.allowed_origins ?? [],
});

export async function createApplication(
  deps: ApplicationDeps,
  principal: TenantPrincipal,
  input: AccessInput & { name: string; create_key: boolean; allowed_origins?: string[] },
) {
  assertValidAccess(input);
  assertWithinCeiling(principal, input);
  const now = deps.clock.now();
  const mintedBy = mintingMemberOf(principal);
  const createdThrough = mintingApplicationOf(principal);
  const application: Application = {
    id: uuidv7(now),
    tenant_id: principal.tenantId,
    name: input.name,
    type: input.type,
    permissions: [...new Set(input.permissions)],
    rules: input.rules,
    allowed_origins: [...new Set(input.allowed_origins ?? [])],
    ...(mintedBy ? { minted_by: mintedBy } : {}),
    ...(createdThrough ? { created_through: createdThrough } : {}),
    created_by: principal.application.id,
    created_at: now.toISOString(),
  };
  const issued = input.create_key ? newKey(deps, principal, application) : undefined;
  await deps.applications.create(
    application,
    issued?.stored,
    auditEvent(
      deps,
      principal,
      "application",
      application.id,
      "create",
      `Application created (${application.type})`,
    ),
  );
  return {
    ...present(application),
    ...(issued ? { key: issued.key } : {}),
    keys: issued ? [{ id: issued.stored.id, key: issued.key, created_at: issued.stored.created_at }] : [],
  };
}

async function findApplication(deps: ApplicationDeps, principal: TenantPrincipal, id: string) {
  const application = await deps.applications.get(principal.tenantId, id);
  if (!application) throw notFound("The application");
  return application;
}

async function withKeys(deps: ApplicationDeps, application: Application) {
  const keys = await deps.applications.listKeys(application.tenant_id, application.id);
  return { ...present(application), keys: keys.map(({ id, created_at }) => ({ id, created_at })) };
}

export async function getApplication(deps: ApplicationDeps, principal: TenantPrincipal, id: string) {
  const application = await findApplication(deps, principal, id);
  await recordEvents(deps, [auditEvent(deps, principal, "application", id, "read", "Application read")]);
  return withKeys(deps, application);
}

/**
 * GET /applications/key needs no permission, so a public key (in every visitor's page) or a session reaches it:
 * only a management key is told who in the tenant made or changed its application and which keys it holds.
 */
export async function getOwnApplication(deps: ApplicationDeps, principal: TenantPrincipal) {
  const own = await getApplication(deps, principal, principal.application.id);
  if (principal.application.type === "management") return own;
  const {
    minted_by: _mintedBy,
    created_through: _createdThrough,
    created_by: _createdBy,
    modified_by: _modifiedBy,
    keys: _keys,
    ...shown
  } = own as typeof own & { keys?: unknown };
  return shown;
}

export async function listApplications(deps: ApplicationDeps, principal: TenantPrincipal, page: PageRequest) {
  const result = await deps.applications.list(principal.tenantId, page);
  await recordEvents(
    deps,
    result.items.map((a) =>
      auditEvent(deps, principal, "application", a.id, "read", "Application read in a list"),
    ),
  );
  return { ...result, items: result.items.map(present) };
}

export async function updateApplication(
  deps: ApplicationDeps,
  principal: TenantPrincipal,
  id: string,
  input: { name: string; permissions: Permission[]; rules: AccessRule[]; allowed_origins?: string[] },
) {
  const current = await findApplication(deps, principal, id);
  assertMayManage(principal, current, "change");
  assertValidAccess({ ...input, type: current.type });
  assertWithinCeiling(principal, input);
  const updated: Application = {
    ...current,
    name: input.name,
    permissions: [...new Set(input.permissions)],
    rules: input.rules,
    allowed_origins: [...new Set(input.allowed_origins ?? [])],
    modified_by: principal.application.id,
    modified_at: deps.clock.now().toISOString(),
  };
  await deps.applications.update(
    updated,
    auditEvent(deps, principal, "application", id, "update", "Application updated"),
  );
  deps.authenticator.evict({ applicationId: id });
  return withKeys(deps, updated);
}

export async function deleteApplication(deps: ApplicationDeps, principal: TenantPrincipal, id: string) {
  // member_id never changes, so checking before the delete is race-free.
  const current = await findApplication(deps, principal, id);
  if (isMemberBound(current))
    throw forbidden("A member's own management application is removed only by deleting the member.");
  assertMayManage(principal, current, "delete");
  let deleted: boolean;
  try {
    deleted = await deps.applications.delete(
      principal.tenantId,
      id,
      auditEvent(deps, principal, "application", id, "delete", "Application deleted and its keys revoked"),
      keyRevocationEvents(deps, principal, "it"),
    );
  } finally {
    // Also when the deletion failed part-way: the application is marked, and its keys no longer authenticate
    // (Authenticator reads only applications with no deletion begun); here that takes effect at once.
    deps.authenticator.evict({ applicationId: id, tenantId: principal.tenantId });
  }
  if (!deleted) throw notFound("The application");
}

export async function createApplicationKey(deps: ApplicationDeps, principal: TenantPrincipal, id: string) {
  const application = await findApplication(deps, principal, id);
  assertMayManage(principal, application, "add keys to");
  // A new key is a new holder of the application's access: only a caller holding that access may mint it.
  assertWithinCeiling(principal, application);
  const issued = newKey(deps, principal, application);
  await deps.applications.addKey(
    issued.stored,
    auditEvent(
      deps,
      principal,
      "application_key",
      issued.stored.id,
      "create",
      `Key created for application ${id}`,
    ),
  );
  return { id: issued.stored.id, key: issued.key, created_at: issued.stored.created_at };
}

export async function listApplicationKeys(
  deps: ApplicationDeps,
  principal: TenantPrincipal,
  id: string,
): Promise<Omit<ApplicationKey, "application_id">[]> {
  await findApplication(deps, principal, id);
  const keys = await deps.applications.listKeys(principal.tenantId, id);
  await recordEvents(deps, [
    auditEvent(deps, principal, "application", id, "read", "Application keys listed"),
  ]);
  return keys.map(({ id: keyId, created_at }) => ({ id: keyId, created_at }));
}

export async function getApplicationKey(
  deps: ApplicationDeps,
  principal: TenantPrincipal,
  id: string,
  keyId: string,
) {
  const key = await deps.applications.getKey(principal.tenantId, id, keyId);
  if (!key) throw notFound("The key");
  await recordEvents(deps, [
    auditEvent(deps, principal, "application_key", keyId, "read", `Key of application ${id} read`),
  ]);
  return { id: key.id, created_at: key.created_at };
}

export async function deleteApplicationKey(
  deps: ApplicationDeps,
  principal: TenantPrincipal,
  id: string,
  keyId: string,
) {
  assertMayManage(principal, await findApplication(deps, principal, id), "delete keys of");
  const keyHash = await deps.applications.deleteKey(
    principal.tenantId,
    id,
    keyId,
    auditEvent(deps, principal, "application_key", keyId, "delete", `Key of application ${id} revoked`),
  );
  if (!keyHash) throw notFound("The key");
  deps.authenticator.evict({ keyHash, keyId });
}
