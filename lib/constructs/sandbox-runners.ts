import { createHash } from "node:crypto";
import { ArnFormat, Duration, Stack, Token, Validations } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { MAX_PREFIX_LENGTH } from "#shared/adapters/aws/runner-functions.ts";
import { CHILD_FILES } from "#shared/sandbox/spawn.ts";
import { stablePath } from "../naming.ts";
import { ApiFunction } from "./api-function.ts";

/**
 * What a function may do with the tenants' runner functions:
 * - `prepare`: create one (when code is saved), nothing else;
 * - `run`: create one, wait for it (GetFunction) and invoke it.
 */
export type SandboxAccess = "prepare" | "run";

export interface SandboxRunnersProps {
  logRetention?: RetentionDays;
}

/** Memory of the tenants' runner functions: one child process per code version of the tenant, 64 MB heap each. */
export const SANDBOX_RUNNER_MEMORY_MB = 1024;

/**
 * The tenants' runner functions are made at run time by the control plane (shared/adapters/aws/
 * runner-functions.ts), one per tenant, so CloudFormation does not know them. The stack holds what they
 * share, and the control plane's narrow right to create and invoke them:
 * - `template`: a regular function built by the same esbuild bundling (child.mjs copied next to the bundle).
 *   It is never invoked: its code in the CDK asset bucket and its runtime, handler, memory, timeout and
 *   architecture are what every tenant function is created with. Keeping a function rather than a bare S3
 *   asset reuses ApiFunction's bundling as is.
 * - `role`: the one execution role of every runner: writing to `logGroup`, and nothing else.
 * - `logGroup`: where every runner logs (set through LoggingConfig), with the stack's retention.
 * - `prefix`: every runner's name starts with it; the control plane's lambda actions are scoped to it.
 */
export class SandboxRunners extends Construct {
  readonly template: ApiFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly prefix: string;
  private readonly code: { bucket: string; key: string };

  constructor(scope: Construct, id: string, props: SandboxRunnersProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);

    this.template = new ApiFunction(this, "Template", {
      group: "sandbox-runner",
      description:
        "svc-vault sandbox runner template: bundle and sizing of the tenants' runners (not invoked)",
      logRetention: props.logRetention,
      memorySize: SANDBOX_RUNNER_MEMORY_MB,
      // Asynchronous reactions may run 210 s (spec); synchronous callers stop waiting much earlier.
      timeout: Duration.seconds(240),
      // The sandbox process's entry and the modules it imports, side by side as in the repository.
      copyFiles: CHILD_FILES.map((file) => `shared/sandbox/${file}`),
      // The packages tenant code may require, next to child.mjs where it looks for them: the errors module and
      // the pre-built npm packages (lib/sandbox-packages.ts, built from this checkout's pinned versions).
      afterBundling: (inputDir, outputDir) => [
        `mkdir -p "${outputDir}/sandbox-packages"`,
        `cp "${inputDir}/shared/sandbox/sandbox-packages/reactor-errors.cjs" "${outputDir}/sandbox-packages/"`,
        `cd "${inputDir}" && "${process.execPath}" --import tsx scripts/build-sandbox-packages.ts "${outputDir}/sandbox-packages/built"`,
      ],
    });
    const cfn = this.template.function.node.defaultChild as CfnFunction;
    const code = cfn.code as CfnFunction.CodeProperty;
    if (Token.isUnresolved(cfn.code) || !code.s3Bucket || !code.s3Key)
      throw new Error("The sandbox runner template must have its code in S3 (an asset)");
    this.code = { bucket: code.s3Bucket, key: code.s3Key };

    this.logGroup = new LogGroup(this, "Logs", { retention: props.logRetention ?? RetentionDays.ONE_MONTH });
    this.role = new Role(this, "Role", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: "svc-vault tenant sandbox runners: their log group, nothing else",
    });
    this.logGroup.grantWrite(this.role);

    // Unique per stack (function names are per account and region), short enough for a UUID and a version.
    if (Token.isUnresolved(stack.stackName)) throw new Error("The stack name must be known at synthesis");
    const hash = createHash("sha256")
      .update(`${stack.stackName}/${stablePath(this)}`)
      .digest("hex");
    this.prefix = `${stack.stackName.replace(/[^A-Za-z0-9-]/g, "").slice(0, 10)}-${hash.slice(0, 6)}-`;
    if (this.prefix.length > MAX_PREFIX_LENGTH) throw new Error("The runner prefix is too long");
  }

  /** arn:…:function:<prefix>* — every tenant runner, nothing else. */
  get functionArns(): string {
    return Stack.of(this).formatArn({
      service: "lambda",
      resource: "function",
      resourceName: `${this.prefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  /** The runner bundle's object in the CDK asset bucket (CreateFunction reads it as the caller). */
  get codeObjectArn(): string {
    return Stack.of(this).formatArn({
      service: "s3",
      region: "",
      account: "",
      resource: this.code.bucket,
      resourceName: this.code.key,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /**
   * Sets SVC_RUNNER_* (and, to run, SVC_API_URL for `svc` calls) on `fn` and grants exactly `access`:
   * - lambda:CreateFunction and lambda:TagResource (the tags are set at creation) on `<prefix>*`;
   * - to run, also lambda:GetFunction (waiting for Active) and lambda:InvokeFunction on `<prefix>*`;
   * - iam:PassRole on the runner role only, and only to Lambda;
   * - s3:GetObject on the runner bundle's object only.
   */
  bind(fn: ApiFunction, access: SandboxAccess, apiUrl?: string): void {
    const cfn = this.template.function.node.defaultChild as CfnFunction;
    const stack = Stack.of(this);
    const env: Record<string, string> = {
      SVC_RUNNER_PREFIX: this.prefix,
      SVC_RUNNER_ROLE_ARN: this.role.roleArn,
      SVC_RUNNER_CODE_BUCKET: this.code.bucket,
      SVC_RUNNER_CODE_KEY: this.code.key,
      SVC_RUNNER_RUNTIME: String(cfn.runtime),
      SVC_RUNNER_HANDLER: String(cfn.handler),
      SVC_RUNNER_MEMORY_MB: String(cfn.memorySize),
      SVC_RUNNER_TIMEOUT_SECONDS: String(cfn.timeout),
      SVC_RUNNER_ARCHITECTURE: String(cfn.architectures?.[0] ?? "x86_64"),
      SVC_RUNNER_LOG_GROUP: this.logGroup.logGroupName,
      SVC_STACK_NAME: stack.stackName,
      SVC_SANDBOX: "runner",
    };
    for (const [name, value] of Object.entries(env)) fn.function.addEnvironment(name, value);
    if (access === "run") {
      if (!apiUrl) throw new Error("Running sandbox code needs the API URL (svc calls)");
      fn.function.addEnvironment("SVC_API_URL", apiUrl);
    }

    const lambdaActions = ["lambda:CreateFunction", "lambda:TagResource"];
    if (access === "run") lambdaActions.push("lambda:GetFunction", "lambda:InvokeFunction");
    fn.function.addToRolePolicy(
      new PolicyStatement({ actions: lambdaActions, resources: [this.functionArns] }),
    );
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["iam:PassRole"],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } },
      }),
    );
    fn.function.addToRolePolicy(
      new PolicyStatement({ actions: ["s3:GetObject"], resources: [this.codeObjectArn] }),
    );

    Validations.of(fn.role.node.findChild("DefaultPolicy")).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:${this.prefix}*]`,
      reason:
        "Tenant runner functions are created at run time, one per tenant, so their names are known only by " +
        `prefix: the actions are scoped to functions named ${this.prefix}* in this account and region.`,
    });
  }
}
