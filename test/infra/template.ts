import type { CfnElement, Stack } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import type { ApiFunction } from "#lib/constructs/api-function.ts";

/** Small readers over a synthesized template, for assertions the Match API cannot express. */

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

export function resourcesOfType(template: Template, type: string): [string, Resource][] {
  const all = template.toJSON().Resources as Record<string, Resource>;
  return Object.entries(all).filter(([, r]) => r.Type === type);
}

export function logicalIdOfFunction(stack: Stack, fn: ApiFunction): string {
  return stack.getLogicalId(fn.function.node.defaultChild as CfnFunction);
}

/** Every statement of every identity policy attached to the function's role. */
export function roleStatements(template: Template, stack: Stack, fn: ApiFunction): Statement[] {
  const roleId = stack.getLogicalId(fn.role.node.defaultChild as CfnElement);
  return resourcesOfType(template, "AWS::IAM::Policy")
    .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

export const actionsOf = (statements: Statement[], prefix = ""): string[] =>
  statements.flatMap((s) => asArray(s.Action)).filter((a) => a.startsWith(prefix));

export const statementsWithAction = (statements: Statement[], prefix: string): Statement[] =>
  statements.filter((s) => asArray(s.Action).some((a) => a.startsWith(prefix)));
