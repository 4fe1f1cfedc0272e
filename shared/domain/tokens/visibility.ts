import {
  type AccessGrant,
  type AccessRule,
  evaluateAccess,
  type RuleCondition,
  type TokenRef,
} from "#shared/domain/access-rules.ts";
import type { TokenPermission } from "#shared/domain/permissions.ts";
import type { Visibility, VisibilityClause } from "./token.ts";

/**
 * The one rule of every token list and count: a token is shown and counted only if the caller may read it.
 * Stores cannot run the access rules, so each grant's rules become clauses they filter on; the clauses are
 * exactly evaluateAccess's answer (test/unit/visibility.test.ts proves it), so a `total_items` never counts a
 * token the list would leave out, for a session (its own grant and its application's) as for a key.
 */

/** One grant's tokens for `permission`: all (undefined), none ([]), or those matching one of the clauses. */
export function grantVisibility(
  grant: AccessGrant,
  permission: TokenPermission,
): VisibilityClause[] | undefined {
  if (grant.rules.length === 0) return grant.permissions.includes(permission) ? undefined : [];
  // A rule that does not grant the permission never decides it (evaluateAccess skips it), whatever its priority.
  const clauses = grant.rules
    .filter((rule) => rule.permissions.includes(permission))
    .flatMap((rule) => ruleClause(rule) ?? []);
  return clauses.some(matchesEveryToken) ? undefined : clauses;
}

/** The tokens a rule matches (its container and every condition), or undefined when none can. */
function ruleClause(rule: AccessRule): VisibilityClause | undefined {
  let clause: VisibilityClause | undefined =
    rule.container === undefined ? {} : { containerPrefix: rule.container };
  for (const condition of rule.conditions ?? [])
    clause = clause && narrow(clause, conditionClause(condition));
  return clause;
}

/** The container prefix two prefixes share (the longer), or undefined when they diverge. */
const overlap = (a: string, b: string) => (a.startsWith(b) ? a : b.startsWith(a) ? b : undefined);

/**
 * Tokens within `scope` (a container prefix) that one grant surely *reveals* for `permission`: those of each reveal
 * rule that no rule before it (by priority) may decide otherwise for. A rule before it that is not reveal and may
 * match a token of its region drops it, since "a region less another" is no clause: a key that masks a container
 * inside one it reveals finds nothing there unless `scope` leaves the masked one out. Never a token evaluateAccess
 * does not reveal (test/unit/visibility.test.ts), so a store filtering on it answers nothing the caller masks.
 */
export function grantRevealVisibility(
  grant: AccessGrant,
  permission: TokenPermission,
  scope = "/",
): VisibilityClause[] | undefined {
  if (grant.rules.length === 0) {
    const revealed = evaluateAccess(grant, { id: "", container: scope }, permission) === "reveal";
    return !revealed ? [] : scope === "/" ? undefined : [{ containerPrefix: scope }];
  }
  const deciding = grant.rules
    .filter((rule) => rule.permissions.includes(permission))
    .sort((a, b) => a.priority - b.priority);
  const clauses = deciding.flatMap((rule, i) => {
    const region = rule.transform === "reveal" ? overlap(rule.container ?? "/", scope) : undefined;
    if (region === undefined) return [];
    const decidedBefore = deciding
      .slice(0, i)
      .some(
        (before) => before.transform !== "reveal" && overlap(before.container ?? "/", region) !== undefined,
      );
    const clause = decidedBefore ? undefined : ruleClause(rule);
    return (clause && narrow(clause, { containerPrefix: region })) ?? [];
  });
  return clauses.some(matchesEveryToken) ? undefined : clauses;
}

/** The visibility of a caller whose access is all of `grants` (each grant's clauses must hold). */
export function visibilityOf(grants: readonly (VisibilityClause[] | undefined)[]): Visibility {
  return grants.reduce<Visibility>(
    (visible, clauses) => visibleToBoth(visible, clauses && [clauses]),
    undefined,
  );
}

/** Tokens visible under both: every set of each must hold. */
export function visibleToBoth(a: Visibility, b: Visibility): Visibility {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (isEmpty(a) || isEmpty(b)) return [];
  // A set every token of another set already matches adds nothing: leave it out, so the usual session (narrower
  // than its application) filters on its own clauses alone and the store's expression stays small.
  const sets = [...a, ...b];
  return sets.filter(
    (wider, i) =>
      !sets.some((narrower, j) => j !== i && (j < i || !within(wider, narrower)) && within(narrower, wider)),
  );
}

/** Whether every token matching a clause of `narrower` matches a clause of `wider`. */
function within(narrower: VisibilityClause[], wider: VisibilityClause[]): boolean {
  return narrower.every((clause) => wider.some((other) => sameClause(narrow(clause, other), clause)));
}

function sameClause(a: VisibilityClause | undefined, b: VisibilityClause): boolean {
  return (
    a !== undefined &&
    a.containerPrefix === b.containerPrefix &&
    a.containerEquals === b.containerEquals &&
    a.idPrefix === b.idPrefix &&
    a.idEquals === b.idEquals
  );
}

/** Whether `token` is visible: what a store's filter decides, here for tests and callers without a store. */
export function isVisible(visibility: Visibility, token: TokenRef): boolean {
  if (visibility === undefined) return true;
  return (
    !isEmpty(visibility) && visibility.every((set) => set.some((clause) => clauseMatches(clause, token)))
  );
}

/** No token at all: no sets, or a set no token can match. */
export function isEmpty(visibility: VisibilityClause[][]): boolean {
  return visibility.length === 0 || visibility.some((set) => set.length === 0);
}

function clauseMatches(clause: VisibilityClause, token: TokenRef): boolean {
  return (
    (clause.containerPrefix === undefined || token.container.startsWith(clause.containerPrefix)) &&
    (clause.containerEquals === undefined || token.container === clause.containerEquals) &&
    (clause.idPrefix === undefined || token.id.startsWith(clause.idPrefix)) &&
    (clause.idEquals === undefined || token.id === clause.idEquals)
  );
}

/** Every container starts with `/`, so a clause asking for no more than that matches every token. */
function matchesEveryToken(clause: VisibilityClause): boolean {
  return (
    (clause.containerPrefix === undefined || clause.containerPrefix === "/") &&
    clause.containerEquals === undefined &&
    clause.idPrefix === undefined &&
    clause.idEquals === undefined
  );
}

function conditionClause(condition: RuleCondition): VisibilityClause {
  if (condition.attribute === "id")
    return condition.operator === "equals" ? { idEquals: condition.value } : { idPrefix: condition.value };
  return condition.operator === "equals"
    ? { containerEquals: condition.value }
    : { containerPrefix: condition.value };
}

interface Constraint {
  prefix?: string;
  equals?: string;
}

/**
 * The clause both hold for, or undefined when no token can (two different ids, prefixes that diverge): every
 * condition of a rule must hold, so none may overwrite another.
 */
function narrow(a: VisibilityClause, b: VisibilityClause): VisibilityClause | undefined {
  const container = narrowConstraint(
    { prefix: a.containerPrefix, equals: a.containerEquals },
    { prefix: b.containerPrefix, equals: b.containerEquals },
  );
  const id = narrowConstraint(
    { prefix: a.idPrefix, equals: a.idEquals },
    { prefix: b.idPrefix, equals: b.idEquals },
  );
  if (!container || !id) return undefined;
  const clause: VisibilityClause = {};
  if (container.prefix !== undefined) clause.containerPrefix = container.prefix;
  if (container.equals !== undefined) clause.containerEquals = container.equals;
  if (id.prefix !== undefined) clause.idPrefix = id.prefix;
  if (id.equals !== undefined) clause.idEquals = id.equals;
  return clause;
}

function narrowConstraint(a: Constraint, b: Constraint): Constraint | undefined {
  const prefixes = [a.prefix, b.prefix].filter((p): p is string => p !== undefined);
  const equals = [a.equals, b.equals].filter((e): e is string => e !== undefined);
  const [value] = equals;
  if (value !== undefined)
    return equals.every((e) => e === value) && prefixes.every((p) => value.startsWith(p))
      ? { equals: value }
      : undefined;
  const longest = prefixes.reduce<string | undefined>(
    (best, p) => (best === undefined || p.length > best.length ? p : best),
    undefined,
  );
  if (longest === undefined) return {};
  return prefixes.every((p) => longest.startsWith(p)) ? { prefix: longest } : undefined;
}
