import {
  type AccessGrant,
  evaluateAccess,
  type TokenRef,
  type Transform,
} from "#shared/domain/access-rules.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { forbidden } from "#shared/domain/errors.ts";
import type { TokenPermission } from "#shared/domain/permissions.ts";
import type { Visibility } from "./token.ts";
import { grantRevealVisibility, grantVisibility, visibilityOf, visibleToBoth } from "./visibility.ts";

/**
 * How a caller reaches tokens: the transform per token and permission, and which tokens a list shows and counts
 * (exactly those `evaluate` grants the permission on: tokens/visibility.ts).
 */
export interface TokenAccess {
  evaluate(token: TokenRef, permission: TokenPermission): Transform | undefined;
  visibility(permission: TokenPermission): Visibility;
  /** Tokens within `scope` surely revealed for `permission` (no more than evaluate reveals: visibility.ts). */
  revealVisibility(permission: TokenPermission, scope?: string): Visibility;
}

const STRENGTH: Record<Transform, number> = { redact: 0, mask: 1, reveal: 2 };

/** The grants a caller's token access is made of, as plain data (so it can travel sealed with a queued job). */
export interface Grants {
  application: AccessGrant;
  /** A session's own grant (empty until authorized), intersected with the application's. */
  session?: AccessGrant;
}

const grant = (g: AccessGrant): AccessGrant => ({ permissions: g.permissions, rules: g.rules });

export function grantsOf(principal: TenantPrincipal): Grants {
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
  return session ? intersect(grantAccess(application), grantAccess(session)) : grantAccess(application);
}

// Classes rather than objects of closures: one is built on every token request.
class GrantAccess implements TokenAccess {
  constructor(private readonly grant: AccessGrant) {}
  evaluate(token: TokenRef, permission: TokenPermission): Transform | undefined {
    return evaluateAccess(this.grant, token, permission);
  }
  visibility(permission: TokenPermission): Visibility {
    return visibilityOf([grantVisibility(this.grant, permission)]);
  }
  revealVisibility(permission: TokenPermission, scope?: string): Visibility {
    return visibilityOf([grantRevealVisibility(this.grant, permission, scope)]);
  }
}

class BothAccess implements TokenAccess {
  constructor(
    private readonly a: TokenAccess,
    private readonly b: TokenAccess,
  ) {}
  evaluate(token: TokenRef, permission: TokenPermission): Transform | undefined {
    const first = this.a.evaluate(token, permission);
    const second = this.b.evaluate(token, permission);
    return first && second ? weaker(first, second) : undefined;
  }
  // Both grants' clauses: a list (and its count) holds only what both let the caller see.
  visibility(permission: TokenPermission): Visibility {
    return visibleToBoth(this.a.visibility(permission), this.b.visibility(permission));
  }
  // Revealed by both: the weaker of two reveals is reveal.
  revealVisibility(permission: TokenPermission, scope?: string): Visibility {
    return visibleToBoth(
      this.a.revealVisibility(permission, scope),
      this.b.revealVisibility(permission, scope),
    );
  }
}

const grantAccess = (grant: AccessGrant): TokenAccess => new GrantAccess(grant);

/**
 * What a search answers of a token: it needs `token:search` as well as `token:read` on the token (a rule granting
 * search only on `/general/` finds nothing elsewhere), and the weaker of the two transforms.
 */
export function searchTransform(access: TokenAccess, token: TokenRef): Transform | undefined {
  const read = access.evaluate(token, "token:read");
  const search = access.evaluate(token, "token:search");
  return read && search ? weaker(read, search) : undefined;
}

/**
 * What a listing asks the store for, so that nothing it answers is dropped afterwards (a dropped match would still
 * use up the pages a request reads, and `next` would hint at it): the tokens the caller reads, and searches too for
 * a search; with a fingerprint filter, only those surely revealed within `scope` (a fingerprint matches a value,
 * so matching it where the caller masks would be an oracle).
 */
export function listingVisibility(
  access: TokenAccess,
  options: { search?: boolean; fingerprint?: boolean; scope?: string },
): Visibility {
  const of = (permission: TokenPermission) =>
    options.fingerprint ? access.revealVisibility(permission, options.scope) : access.visibility(permission);
  return options.search ? visibleToBoth(of("token:read"), of("token:search")) : of("token:read");
}

/** Access no wider than either: a permission only where both hold it, with the weaker transform. */
export const intersect = (a: TokenAccess, b: TokenAccess): TokenAccess => new BothAccess(a, b);

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
