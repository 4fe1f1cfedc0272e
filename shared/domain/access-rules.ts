import type { ApplicationType, Permission, TokenPermission } from "./permissions.ts";
import { disallowedPermissions, isTokenPermission } from "./permissions.ts";

export type Transform = "redact" | "mask" | "reveal";

export interface RuleCondition {
  attribute: "id" | "container";
  operator: "equals" | "starts_with";
  value: string;
}

export interface AccessRule {
  description?: string;
  priority: number;
  container?: string;
  conditions?: RuleCondition[];
  transform: Transform;
  permissions: TokenPermission[];
}

/** What a caller may do, as the evaluator needs it: its plain permissions and its rules. */
export interface AccessGrant {
  permissions: readonly Permission[];
  rules: readonly AccessRule[];
}

export interface TokenRef {
  id: string;
  container: string;
}

export const CONTAINER_PATTERN = /^\/(?:[a-z0-9_-]+\/)*$/;

/** Containers start and end with `/` and hold segments of [a-z0-9_-]; input is lowercased first. */
export function normalizeContainer(raw: string): string | undefined {
  const lowered = raw.trim().toLowerCase();
  return CONTAINER_PATTERN.test(lowered) ? lowered : undefined;
}

function conditionHolds(condition: RuleCondition, token: TokenRef): boolean {
  const actual = condition.attribute === "id" ? token.id : token.container;
  return condition.operator === "equals" ? actual === condition.value : actual.startsWith(condition.value);
}

function ruleMatches(rule: AccessRule, token: TokenRef): boolean {
  if (rule.container !== undefined && !token.container.startsWith(rule.container)) return false;
  return (rule.conditions ?? []).every((c) => conditionHolds(c, token));
}

/**
 * The transform a caller gets for `permission` on `token`, or undefined when no access is granted.
 * With rules: the lowest-priority rule that matches the token and grants the permission decides.
 * Without rules: the plain permission applies to every container, with an implicit mask (or reveal for use).
 */
export function evaluateAccess(
  grant: AccessGrant,
  token: TokenRef,
  permission: TokenPermission,
): Transform | undefined {
  if (grant.rules.length > 0) {
    const rule = [...grant.rules]
      .sort((a, b) => a.priority - b.priority)
      .find((r) => r.permissions.includes(permission) && ruleMatches(r, token));
    return rule?.transform;
  }
  if (!grant.permissions.includes(permission)) return undefined;
  return permission === "token:use" ? "reveal" : "mask";
}

/** Whether a caller could hold `permission` on at least some token (used for route-level checks). */
export function mayEverHold(grant: AccessGrant, permission: Permission): boolean {
  if (grant.permissions.includes(permission)) return true;
  return isTokenPermission(permission) && grant.rules.some((r) => r.permissions.includes(permission));
}

/**
 * Invariants of a rule set, as field errors keyed by path (`rules.0.container`).
 * Application rules use `container`; session rules may use `conditions` instead.
 */
export function ruleSetErrors(
  rules: readonly AccessRule[],
  options: { type: ApplicationType; allowConditions: boolean },
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (path: string, message: string) => {
    errors[path] = [...(errors[path] ?? []), message];
  };
  if (rules.length > 0 && options.type === "management") {
    add("rules", "Management applications cannot hold access rules.");
    return errors;
  }
  const priorities = new Set<number>();
  rules.forEach((rule, index) => {
    const at = `rules.${index}`;
    if (priorities.has(rule.priority)) add(`${at}.priority`, "Priorities must be unique within a rule set.");
    priorities.add(rule.priority);
    const hasContainer = rule.container !== undefined;
    const hasConditions = (rule.conditions?.length ?? 0) > 0;
    if (!options.allowConditions && rule.conditions !== undefined)
      add(`${at}.conditions`, "Conditions are only allowed in session rules; use container.");
    if (hasContainer === hasConditions)
      add(
        at,
        options.allowConditions
          ? "A rule needs exactly one of container or conditions."
          : "A rule needs a container.",
      );
    if (rule.permissions.length === 0) add(`${at}.permissions`, "A rule must grant at least one permission.");
    for (const p of disallowedPermissions(options.type, rule.permissions))
      add(`${at}.permissions`, `A ${options.type} application cannot hold ${p}.`);
  });
  return errors;
}
