import { existsSync } from "node:fs";
import { join } from "node:path";
import { ArnFormat, Duration, Stack, Validations } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { IKey } from "aws-cdk-lib/aws-kms";
import { Architecture, type RecursiveLoop, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { LogLevel, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { BUNDLE_POLICY, REPO_ROOT } from "#lib/bundling.ts";
import { RATE_KEY_PREFIX } from "#shared/adapters/dynamodb/request-budget.ts";
import { TABLE_KEYS } from "#shared/adapters/dynamodb/schema.ts";
import { KEY_PROBE_CONTEXT } from "#shared/domain/crypto/key-health.ts";
import { ANSWER_KEY_PREFIX, CUSTOMER_KEY_CHECK_ID } from "#shared/domain/keys/key-refs.ts";
import type { DataKeyUse } from "#shared/http/route.ts";
import { API_FUNCTION_TIMEOUT_SECONDS, API_GATEWAY_TIMEOUT_SECONDS } from "#shared/http/time-limits.ts";
import { LAMBDA_NODE_OPTIONS } from "#shared/node-options.ts";

/** Only under an encryption context naming an answer key (and `also`): see ApiFunction.bindDataKey. */
const answerKeysOnly = (also: readonly string[] = []) => ({
  StringLike: { "kms:EncryptionContext:key_id": [`${ANSWER_KEY_PREFIX}*`, ...also] },
});

/** lib/bundling.ts's policy in CDK's terms. */
const cdkBundling = () => ({
  minify: BUNDLE_POLICY.minify,
  keepNames: BUNDLE_POLICY.keepNames,
  format: OutputFormat.ESM,
  target: BUNDLE_POLICY.target,
  mainFields: [...BUNDLE_POLICY.mainFields],
  banner: BUNDLE_POLICY.banner,
  // esbuild runs in projectRoot (REPO_ROOT), so the policy's ./ paths resolve as in lib/bundling.ts.
  esbuildArgs: {
    "--alias": Object.entries(BUNDLE_POLICY.alias).map(([name, path]) => `${name}=${path}`),
  },
});

export { REPO_ROOT };

/**
 * CDK wants a lock file that exists; it only picks the package manager from its name (nothing is installed
 * into bundles here). npm never packs package-lock.json, so the installed package offers its package.json.
 */
const DEPS_LOCK_FILE = [join(REPO_ROOT, "package-lock.json"), join(REPO_ROOT, "package.json")].find((file) =>
  existsSync(file),
) as string;

/**
 * The newest Node.js runtime this aws-cdk-lib knows (cdk-nag AwsSolutions-L1 wants the latest).
 * Pinned rather than Runtime.NODEJS_LATEST so a library upgrade never silently changes the runtime.
 */
export const NODE_RUNTIME = Runtime.NODEJS_24_X;

/**
 * How a function reaches the table:
 * - `nameOnly`: SVC_TABLE_NAME is set (shared/config.ts requires it in AWS mode), nothing is granted.
 * - `read`: GetItem, BatchGetItem, Query on the table and GSI1, and UpdateItem on rate-limit counters only
 *   (items whose partition key starts with `RATE#`: shared/adapters/dynamodb/request-budget.ts).
 * - `readWrite`: read, plus ConditionCheckItem, PutItem, UpdateItem, DeleteItem, BatchWriteItem on the table
 *   (TransactWriteItems is authorised through these per-item actions).
 */
export type TableAccess = "nameOnly" | "read" | "readWrite";

export const TABLE_READ_ACTIONS = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"] as const;
export const TABLE_WRITE_ACTIONS = [
  "dynamodb:ConditionCheckItem",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchWriteItem",
] as const;

export { API_GATEWAY_TIMEOUT_SECONDS };

/** shared/http/time-limits.ts says why (the proxy's destination deadline is bounded by it too). */
export const API_FUNCTION_TIMEOUT = Duration.seconds(API_FUNCTION_TIMEOUT_SECONDS);

/** Memory of every API function unless a group sets its own (what `npm run cost` prices Lambda at). */
export const API_FUNCTION_MEMORY_MB = 512;

export interface ApiFunctionProps {
  /** Directory under functions/ holding handler.ts (one function per endpoint group). */
  group: string;
  description?: string;
  /** CloudWatch retention of the function's log group. */
  logRetention?: RetentionDays;
  /** Memory in MB (default API_FUNCTION_MEMORY_MB). */
  memorySize?: number;
  /** Default API_FUNCTION_TIMEOUT, below API Gateway's 29 s integration timeout. */
  timeout?: Duration;
  /** Repository files copied next to the bundle (the sandbox's child script, which runs as its own process). */
  copyFiles?: string[];
  /** More shell commands after bundling, given the repository and the bundle's directories. */
  afterBundling?: (inputDir: string, outputDir: string) => string[];
  /** Lambda's recursive-loop detection (default: stop a Lambda → queue → same Lambda chain after 16 turns). */
  recursiveLoop?: RecursiveLoop;
}

/**
 * Every Lambda of the service: one runtime, architecture, log group, tracing and bundling policy, and
 * bind* helpers that set a function's environment together with exactly the IAM it needs.
 * The role is created here (no AWSLambdaBasicExecutionRole): logging is granted on the function's own log
 * group only.
 */
export class ApiFunction extends Construct {
  readonly function: NodejsFunction;
  /** Set by bindDataKey: which keys the function generates and unwraps (shared/http/route.ts GROUP_DATA_KEYS). */
  dataKeyUse: DataKeyUse = "none";
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, "Logs", {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
    });
    this.role = new Role(this, "Role", {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: `svc-vault ${props.group} function`,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, "Function", {
      entry: join(REPO_ROOT, "functions", props.group, "handler.ts"),
      handler: "handler",
      projectRoot: REPO_ROOT,
      depsLockFilePath: DEPS_LOCK_FILE,
      description: props.description ?? `svc-vault ${props.group} endpoints`,
      runtime: NODE_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? API_FUNCTION_MEMORY_MB,
      timeout: props.timeout ?? API_FUNCTION_TIMEOUT,
      tracing: Tracing.ACTIVE,
      ...(props.recursiveLoop ? { recursiveLoop: props.recursiveLoop } : {}),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        SVC_MODE: "aws",
        // Runs no tenant code unless SandboxRunners.bind gives it a runner (shared/config.ts fails closed).
        SVC_SANDBOX: "none",
        LOG_LEVEL: "INFO",
        // The group, for anything that reads Powertools' default; the service's own logger, tracer and metrics
        // name the service `svc-vault` themselves (shared/logger.ts, shared/observability/metric-names.ts).
        POWERTOOLS_SERVICE_NAME: props.group,
        NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
      },
      bundling: {
        ...cdkBundling(),
        // Emits index.mjs.map; with --enable-source-maps errors show TypeScript file:line.
        sourceMap: true,
        // Line mappings suffice for stack traces; leaving sources out keeps the asset small.
        sourcesContent: false,
        // Bundle the AWS SDK: run the exact version the tests ran against, not whatever the runtime ships,
        // tree-shaken to the clients we use.
        bundleAwsSDK: true,
        // esbuild prints warnings and errors only, not its per-build size summary.
        logLevel: LogLevel.WARNING,
        ...(props.copyFiles?.length || props.afterBundling
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => [
                  ...(props.copyFiles ?? []).map((file) => `cp "${inputDir}/${file}" "${outputDir}/"`),
                  ...(props.afterBundling?.(inputDir, outputDir) ?? []),
                ],
              },
            }
          : {}),
      },
    });

    // Tracing adds xray:PutTraceSegments/PutTelemetryRecords on "*" to the role's default policy.
    // Acknowledged for that one finding on that one policy; any other wildcard still fails synthesis.
    Validations.of(this.role.node.findChild("DefaultPolicy")).acknowledge({
      id: "AwsSolutions-IAM5[Resource::*]",
      reason: "X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.",
    });
  }

  /** Sets SVC_TABLE_NAME and grants exactly the table actions of `access` (no Scan, no DescribeTable). */
  bindTable(table: ITable, access: TableAccess): this {
    this.function.addEnvironment("SVC_TABLE_NAME", table.tableName);
    if (access === "nameOnly") return this;
    const indexArn = `${table.tableArn}/index/${TABLE_KEYS.gsi1Name}`;
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: [...TABLE_READ_ACTIONS], resources: [table.tableArn, indexArn] }),
    );
    if (access === "readWrite")
      this.function.addToRolePolicy(
        new PolicyStatement({ actions: [...TABLE_WRITE_ACTIONS], resources: [table.tableArn] }),
      );
    // Every rate-limited request may lease from its bucket's counter, read-only groups too.
    else
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: ["dynamodb:UpdateItem"],
          resources: [table.tableArn],
          conditions: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [`${RATE_KEY_PREFIX}*`] } },
        }),
      );
    return this;
  }

  /**
   * Sets SVC_KMS_KEY_ID and grants exactly what envelope encryption needs on that key: GenerateDataKey
   * (new per-tenant data keys) and Decrypt (unwrapping them). No Encrypt, no key administration.
   * `use` (GROUP_DATA_KEYS): `data`, every tenant key; `answers`, only under an encryption context whose key_id
   * names an answer key (shared/domain/keys/key-refs.ts), so the function can unwrap no data or HMAC key;
   * `probe`, only under the readiness probe's encryption context (shared/domain/crypto/key-health.ts), which no
   * tenant's key has.
   *
   * Bring your own key (PUT /tenants/self/keys/kms): a tenant's own key, usually in its own account, must let
   * this function's role call kms:GenerateDataKey, kms:Decrypt and kms:ReEncryptTo (the tenants function also
   * kms:ReEncryptFrom on this key) under the condition kms:EncryptionContext:tenant_id = <its tenant id>, by key
   * policy or grant; across accounts the role needs the same actions in its own policy. The key policy and
   * grant the customer gives: docs/security.md, "Bring your own key".
   */
  bindDataKey(key: IKey, use: Exclude<DataKeyUse, "none"> = "data"): this {
    this.function.addEnvironment("SVC_KMS_KEY_ID", key.keyArn);
    this.dataKeyUse = use;
    this.useKey(
      key,
      ["kms:GenerateDataKey", "kms:Decrypt"],
      use === "probe"
        ? { StringEquals: { "kms:EncryptionContext:purpose": KEY_PROBE_CONTEXT.purpose } }
        : use === "answers"
          ? answerKeysOnly()
          : undefined,
    );
    return this;
  }

  /**
   * The one way a function gets to use one of the vault's keys: the actions in its role's policy, and the same
   * actions for its role in the key's own policy. The vault's keys give the account (IAM) key administration
   * only (lib/constructs/vault-data.ts), so no other principal of the account can decrypt or sign with them,
   * whatever its identity policy says. An imported key (no policy here) gets the identity statement only.
   */
  private useKey(
    key: IKey,
    actions: string[],
    conditions?: Record<string, Record<string, string | string[]>>,
  ): void {
    this.function.addToRolePolicy(
      new PolicyStatement({ actions, resources: [key.keyArn], ...(conditions ? { conditions } : {}) }),
    );
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [this.role],
        actions,
        resources: ["*"],
        ...(conditions ? { conditions } : {}),
      }),
    );
  }

  /**
   * Bring your own key: the data-key actions on tenants' own KMS keys in `accounts`, only for requests that
   * carry a tenant_id encryption context (every tenant data key does; the customer's key policy or grant then
   * pins it to its own tenant id, docs/security.md). `rewrapFrom`: the deployment key a tenant's data keys are
   * re-encrypted from when it brings its key (PUT /tenants/self/keys/kms, one ReEncrypt per data key).
   */
  grantCustomerKeys(accounts: readonly string[], rewrapFrom?: IKey): this {
    const tenantContext = { Null: { "kms:EncryptionContext:tenant_id": "false" } };
    const customerKeys = accounts.map((account) => `arn:${Stack.of(this).partition}:kms:*:${account}:key/*`);
    // The same key ids as on the deployment's key; the tenants function also tries a customer key first.
    const keyIds =
      this.dataKeyUse === "answers" ? answerKeysOnly(rewrapFrom ? [CUSTOMER_KEY_CHECK_ID] : []) : {};
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["kms:GenerateDataKey", "kms:Decrypt"],
        resources: customerKeys,
        conditions: { ...tenantContext, ...keyIds },
      }),
    );
    if (rewrapFrom) {
      // Re-wrapping moves every stored key under the customer's without ever returning one in plaintext.
      this.function.addToRolePolicy(
        new PolicyStatement({
          actions: ["kms:ReEncryptTo", "kms:ReEncryptFrom"],
          resources: customerKeys,
          conditions: tenantContext,
        }),
      );
      this.useKey(rewrapFrom, ["kms:ReEncryptFrom"], tenantContext);
    }
    return this;
  }

  /**
   * Sets SVC_RECEIPT_KEY_ID: the deployment's asymmetric key that signs tenant deletion receipts. `sign`: Sign
   * and GetPublicKey (DELETE /tenants/self); `publicKey`: GetPublicKey only (GET /.well-known/svc-vault/receipt-key).
   */
  bindReceiptKey(key: IKey, use: "sign" | "publicKey"): this {
    this.function.addEnvironment("SVC_RECEIPT_KEY_ID", key.keyArn);
    this.useKey(key, use === "sign" ? ["kms:GetPublicKey", "kms:Sign"] : ["kms:GetPublicKey"]);
    return this;
  }

  /**
   * Sets SVC_EMAIL_SENDER and SVC_INVITATION_URL and grants ses:SendEmail from that sender's identity only
   * (the address, or its domain when the domain is the verified identity).
   */
  bindEmailSender(sender: string, invitationUrl: string): this {
    this.function.addEnvironment("SVC_EMAIL_SENDER", sender);
    this.function.addEnvironment("SVC_INVITATION_URL", invitationUrl);
    const domain = sender.split("@")[1] ?? sender;
    const stack = Stack.of(this);
    const identity = (name: string) =>
      stack.formatArn({
        service: "ses",
        resource: "identity",
        resourceName: name,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: ["ses:SendEmail"], resources: [identity(sender), identity(domain)] }),
    );
    return this;
  }

  /**
   * Sets SVC_ROOT_KEY_PARAMETER and grants ssm:GetParameter on that one parameter. The operator creates it
   * as a SecureString (CloudFormation cannot); with the default aws/ssm key no KMS grant is needed.
   */
  bindRootKeyParameter(parameterName: string): this {
    this.function.addEnvironment("SVC_ROOT_KEY_PARAMETER", parameterName);
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["ssm:GetParameter"],
        resources: [ssmParameterArn(this, parameterName)],
      }),
    );
    return this;
  }
}

/** ARN of an SSM parameter by name; names with and without a leading slash map to `parameter/<name>`. */
export function ssmParameterArn(scope: Construct, parameterName: string): string {
  return Stack.of(scope).formatArn({
    service: "ssm",
    resource: "parameter",
    resourceName: parameterName.replace(/^\//, ""),
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}
