import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { App, type CfnElement, type Stack } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { type ApiFunction, REPO_ROOT } from "#lib/constructs/api-function.ts";

const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, "cdk.json"), "utf8")) as {
  context: Record<string, unknown>;
};
/** cdk.json's context (feature flags included): tests synthesize exactly as `cdk synth` does. */
export const CDK_CONTEXT = cdkJson.context;

/** A new App with cdk.json's context, writing its assembly to a new temporary directory. */
export function tempApp(prefix: string): { app: App; outdir: string } {
  const outdir = mkdtempSync(join(tmpdir(), prefix));
  return { app: new App({ outdir, context: CDK_CONTEXT }), outdir };
}

const run = promisify(execFile);

/** Runs `script` (an ES module) in a Node process with a bundled handler's AWS-mode environment; its stdout. */
export async function runAsLambda(script: string): Promise<string> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    env: {
      PATH: process.env.PATH,
      SVC_MODE: "aws",
      SVC_SANDBOX: "none",
      SVC_TABLE_NAME: "svc-vault-smoke",
      AWS_REGION: "us-east-1",
      AWS_LAMBDA_FUNCTION_NAME: "smoke",
      LOG_LEVEL: "SILENT",
    },
  });
  return stdout;
}

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
  Condition?: Record<string, unknown>;
  /** Key policies' statements name their principals. */
  Principal?: unknown;
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
