import { forbidden } from "#shared/domain/errors.ts";
import { type AccessGrant, evaluateAccess, mayEverHold, type Transform } from "./access-rules.ts";
import type { Application, TenantPrincipal } from "./entities.ts";
import { isTokenPermission, type Permission, TOKEN_PERMISSIONS } from "./permissions.ts";

/** How much of a token each transform discloses; no access at all is 0. */
const STRENGTH: Record<Transform, number> = { redact: 1, mask: 2, reveal: 3 };
const strength = (transform: Transform | undefined) => (transform ? STRENGTH[transform] : 0);

/**
 * What a caller may hand out when it creates or changes an application. A member's own management application
 * (the OWNER's, or one an invitation created) acts for a person of the tenant and may grant anything the tenant
 * has (`undefined`); every other caller may grant at most its own permissions and token access.
 */
export function ceilingOf(principal: TenantPrincipal): AccessGrant | undefined {
  if (principal.kind === "application" && principal.application.member_id !== undefined) return undefined;
  if (principal.kind === "session")
    return { permissions: principal.session.permissions, rules: principal.session.rules };
  return { permissions: principal.application.permissions, rules: principal.application.rules };
}

/**
 * The ways `requested` is wider than `ceiling`, as messages (empty: it is no wider). "No wider" means:
 * 1. every permission `requested` names is one the ceiling holds (plainly, or for token permissions through
 *    one of its rules), and
 * 2. for every token permission and every container, the transform `requested` yields (by the usual rule
 *    evaluation, plain permissions included) discloses no more than the ceiling's: none < redact < mask < reveal.
 * Rule evaluation only changes where a rule's container starts, so (2) is checked exactly at `/` and at every
 * container named by either side's rules: any other container evaluates like the longest of those that prefix it.
 */
export function widerThan(ceiling: AccessGrant, requested: AccessGrant): string[] {
  const problems: string[] = [];
  for (const permission of new Set<Permission>([
    ...requested.permissions,
    ...requested.rules.flatMap((r) => r.permissions),
  ]))
    if (!mayEverHold(ceiling, permission)) problems.push(`${permission} is not held by this key`);
  const containers = new Set<string>(["/"]);
  for (const rule of [...ceiling.rules, ...requested.rules]) {
    if (rule.container !== undefined) containers.add(rule.container);
    for (const c of rule.conditions ?? []) if (c.attribute === "container") containers.add(c.value);
  }
  for (const permission of TOKEN_PERMISSIONS) {
    if (!isTokenPermission(permission)) continue;
    for (const container of [...containers].sort()) {
      const token = { id: "", container };
      const wanted = evaluateAccess(requested, token, permission);
      const held = evaluateAccess(ceiling, token, permission);
      if (strength(wanted) > strength(held)) {
        problems.push(
          `${permission} on ${container} would be ${wanted}, but this key has ${held ?? "no access"} there`,
        );
        break;
      }
    }
  }
  return [...new Set(problems)];
}

/** A member's own management application: only its own keys may change it, and only deleting the member removes it. */
export const isMemberBound = (application: Application) => application.member_id !== undefined;

/**
 * The member whose credentials act through `principal`: the member an application is bound to, else the member
 * whose credentials minted the acting key (its own minted_by: a key a member minted for an application someone
 * else made acts for that member, not for the application's maker), else (keys minted before keys recorded it)
 * the member through whose keys the application was created. Keys minted by that principal are revoked when that
 * member is deleted.
 */
export function mintingMemberOf(principal: TenantPrincipal): string | undefined {
  return (
    principal.application.member_id ??
    (principal.kind === "application" ? principal.mintedBy : undefined) ??
    principal.application.minted_by
  );
}

/**
 * The non-member application whose key acts through `principal` (undefined for a member's own key, whose mints
 * follow the member: mintingMemberOf). What such a key mints (keys, applications) lasts only as long as that
 * application: deleting a leaked key's application revokes what was minted with it, as a session ends with the
 * key that authorized it.
 */
export function mintingApplicationOf(principal: TenantPrincipal): string | undefined {
  return principal.kind === "application" && !isMemberBound(principal.application)
    ? principal.application.id
    : undefined;
}

/**
 * The applications the acting key was itself minted through (its whole chain): what it mints carries them too,
 * so a hop through a key minted on another application never leaves the leaked key's chain.
 */
export function mintingChainOf(principal: TenantPrincipal): string[] {
  return principal.kind === "application" ? (principal.mintedThrough ?? []) : [];
}

/**
 * 403 unless the caller's ceiling covers everything `application` holds. Binding a proxy or reactor to an
 * application, or changing what runs with its rights (destination, transforms, `require_auth`, configuration,
 * formula code), is acting as that application, so it needs the same coverage as minting a key for it. The
 * answer names neither the application's access nor what the caller lacks.
 */
export function assertMayActAs(
  principal: TenantPrincipal,
  application: Pick<Application, "permissions" | "rules">,
  action: string,
): void {
  const ceiling = ceilingOf(principal);
  if (ceiling && widerThan(ceiling, application).length > 0)
    throw forbidden(
      `A key can only ${action} an application whose permissions and token access it holds itself.`,
    );
}

/**
 * 403 unless the caller is a member's own key. An accepted invitation makes a member with no ceiling at all,
 * so only a caller without one (a person of the tenant) may invite: any other key would grant more than it holds.
 */
export function assertActsForMember(principal: TenantPrincipal, action: string): void {
  if (ceilingOf(principal) !== undefined)
    throw forbidden(`Only a member's own management key may ${action}: a new member can grant anything.`);
}
