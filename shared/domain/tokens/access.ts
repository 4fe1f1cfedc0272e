import {
  type AccessGrant,
  evaluateAccess,
  mayEverHold,
  type TokenRef,
  type Transform,
} from "#shared/domain/access-rules.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { forbidden } from "#shared/domain/errors.ts";
import type { TokenPermission } from "#shared/domain/permissions.ts";
import type { VisibilityClause } from "./token.ts";

/** How a caller reaches tokens: the transform per token and permission, and which tokens a list may show. */
export interface TokenAccess {
  evaluate(token: TokenRef, permission: TokenPermission): Transform | undefined;
  visibility(permission: TokenPermission): VisibilityClause[] | undefined;
}

const STRENGTH: Record<Transform, number> = { redact: 0, mask: 1, reveal: 2 };

/** The grants a caller's token access is made of, as plain data (so it can travel sealed with a queued job). */
export interface Grants {
  application: AccessGrant;
  /** A session's own grant (empty until authorized), intersected with the application's. */
  session?: AccessGrant;
}

export function grantsOf(principal: TenantPrincipal): Grants {
  const grant = (g: AccessGrant): AccessGrant => ({ permissions: g.permissions, rules: g.rules });
  if (principal.kind === "application") return { application: grant(principal.application) };
  return {
    application: grant(principal.application),
    session: principal.session.authorized ? grant(principal.session) : { permissions: [], rules: [] },
  };
}

/**
 * An application's access is its grant. A session's is its own grant intersected with the authorizing
 * application's, evaluated each time: the weaker transform wins, so a session never sees more than that
 * application would (even after the application's rules change).
 */
export function accessOf(principal: TenantPrincipal): TokenAccess {
  return accessOfGrants(grantsOf(principal));
}

export function accessOfGrants({ application, session }: Grants): TokenAccess {
  if (!session)
    return {
      evaluate: (token, permission) => evaluateAccess(application, token, permission),
      visibility: (permission) => visibilityFor(application, permission),
    };
  return intersect(
    {
      evaluate: (token, permission) => evaluateAccess(application, token, permission),
      visibility: () => undefined,
    },
    {
      evaluate: (token, permission) => evaluateAccess(session, token, permission),
      visibility: (permission) =>
        mayEverHold(application, permission) ? visibilityFor(session, permission) : [],
    },
  );
}

/** Access no wider than either: a permission only where both hold it, with the weaker transform. */
export function intersect(a: TokenAccess, b: TokenAccess): TokenAccess {
  return {
    evaluate: (token, permission) => {
      const first = a.evaluate(token, permission);
      const second = b.evaluate(token, permission);
      return first && second ? weaker(first, second) : undefined;
    },
    // Lists filter by the second's clauses; every shown token still passes evaluate.
    visibility: (permission) => b.visibility(permission),
  };
}

/** The transform that shows less of the two. */
export function weaker(a: Transform, b: Transform): Transform {
  return STRENGTH[a] <= STRENGTH[b] ? a : b;
}

/** The transform the caller gets for `permission` on the token, or a 403 naming what is missing (and why). */
export function requireAccess(
  access: TokenAccess,
  token: { id: string; container: string },
  permission: TokenPermission,
  why?: string,
): Transform {
  const transform = access.evaluate(token, permission);
  if (!transform)
    throw forbidden(
      `The key lacks ${permission} on the container ${token.container}${why ? ` (${why})` : ""}.`,
    );
  return transform;
}

/**
 * Reveal-level `permission` on the token's container, or a 403. Changing what is evaluated on stored data
 * (a mask, a fingerprint or search expression) or where the token lives (its container) would otherwise read
 * the data past the caller's transform.
 */
export function requireReveal(
  access: TokenAccess,
  token: { id: string; container: string },
  permission: TokenPermission,
  what: string,
): void {
  if (requireAccess(access, token, permission) !== "reveal")
    throw forbidden(
      `Changing ${what} needs ${permission} with the reveal transform on the container ${token.container}.`,
    );
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
