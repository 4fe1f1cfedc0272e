import { type AccessGrant, evaluateAccess, type Transform } from "#shared/domain/access-rules.ts";
import type { TokenPermission } from "#shared/domain/permissions.ts";
import { forbidden } from "#shared/http/errors.ts";
import type { VisibilityClause } from "./token.ts";

/** The transform `grant` gets for `permission` on the token, or a 403 naming what is missing. */
export function requireAccess(
  grant: AccessGrant,
  token: { id: string; container: string },
  permission: TokenPermission,
): Transform {
  const transform = evaluateAccess(grant, token, permission);
  if (!transform) throw forbidden(`The key lacks ${permission} on the container ${token.container}.`);
  return transform;
}

/**
 * Which tokens a list may show: every one (undefined) for plain permissions, none ([]) without the permission,
 * else one clause per rule granting it. Per-token transforms are still decided by evaluateAccess.
 */
export function visibilityFor(
  grant: AccessGrant,
  permission: TokenPermission,
): VisibilityClause[] | undefined {
  if (grant.rules.length === 0) return grant.permissions.includes(permission) ? undefined : [];
  return grant.rules
    .filter((rule) => rule.permissions.includes(permission))
    .map((rule) => {
      const clause: VisibilityClause = {};
      if (rule.container !== undefined) clause.containerPrefix = rule.container;
      for (const condition of rule.conditions ?? []) {
        if (condition.attribute === "id") {
          if (condition.operator === "equals") clause.idEquals = condition.value;
          else clause.idPrefix = condition.value;
        } else if (condition.operator === "equals") clause.containerEquals = condition.value;
        else clause.containerPrefix = condition.value;
      }
      return clause;
    });
}
