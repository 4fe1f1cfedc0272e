import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { App, type CfnElement } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { Runtime } from "aws-cdk-lib/aws-lambda";
import { Queue } from "aws-cdk-lib/aws-sqs";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "#lib/app.ts";
import {
  API_FUNCTION_TIMEOUT,
  API_GATEWAY_TIMEOUT_SECONDS,
  TABLE_READ_ACTIONS,
  TABLE_WRITE_ACTIONS,
} from "#lib/constructs/api-function.ts";
import { FUNCTION_ACCESS, type GroupAccess } from "#lib/function-groups.ts";
import type { VaultStack } from "#lib/vault-stack.ts";
import { ensureTable } from "#shared/adapters/dynamodb/bootstrap.ts";
import { TABLE_CALL_LIMITS } from "#shared/adapters/dynamodb/client.ts";
import { routeList } from "#shared/api/index.ts";
import { CONFIG_VARIABLES, loadConfig } from "#shared/config.ts";
import { LIBRARY_VARIABLES } from "#shared/config-docs.ts";
import { DEFAULT_TIMEOUT_MS as PROXY_TIMEOUT_MS } from "#shared/egress/forward.ts";
import { preflightRoutes } from "#shared/http/cors.ts";
import { FUNCTION_GROUPS, type FunctionGroup, GROUP_DATA_KEYS, routeKeyOf } from "#shared/http/route.ts";
import { CHILD_FILES } from "#shared/sandbox/spawn.ts";
import {
  actionsOf,
  asArray,
  CDK_CONTEXT,
  logicalIdOfFunction,
  type Resource,
  resourcesOfType,
  roleStatements,
  runAsLambda,
  type Statement,
  statementsWithAction,
  tempApp,
} from "./template.ts";

// Synthesized once, with cdk.json's context (feature flags included), exactly as `cdk synth` does.
let outdir: string;
let app: App;
let stack: VaultStack;
let template: Template;
let assemblyDir: string;

beforeAll(() => {
  ({ app, outdir } = tempApp("svc-cdk-"));
  stack = buildApp(app);
  // Throws when cdk-nag (a validation plugin) reports any unacknowledged finding.
  assemblyDir = app.synth().directory;
  template = Template.fromStack(stack);
});

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Logical ID of an L2 construct's CloudFormation resource. */
const idOf = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const fnId = (group: FunctionGroup) => logicalIdOfFunction(stack, stack.http.functions[group]);
const tableRef = () => ({ Ref: idOf(stack.data.table) });
const tableArn = () => ({ "Fn::GetAtt": [idOf(stack.data.table), "Arn"] });
const statementsOf = (group: FunctionGroup) => roleStatements(template, stack, stack.http.functions[group]);

function integrationIdOf(group: FunctionGroup): string {
  const matches = resourcesOfType(template, "AWS::ApiGatewayV2::Integration").filter(
    ([, r]) =>
      JSON.stringify(r.Properties.IntegrationUri) === JSON.stringify({ "Fn::GetAtt": [fnId(group), "Arn"] }),
  );
  expect(matches, `one integration for ${group}`).toHaveLength(1);
  const [id, integration] = matches[0] as [string, Resource];
  expect(integration.Properties).toMatchObject({ IntegrationType: "AWS_PROXY", PayloadFormatVersion: "2.0" });
  return id;
}

const target = (group: FunctionGroup) => ({
  "Fn::Join": ["", ["integrations/", { Ref: integrationIdOf(group) }]],
});

describe("HTTP API", () => {
  it("has exactly one route per route table entry, plus $default, each on its group's function", () => {
    const routes = resourcesOfType(template, "AWS::ApiGatewayV2::Route");
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(
      [...routeList.map(routeKeyOf), ...preflightRoutes(routeList).map(routeKeyOf), "$default"].sort(),
    );
    for (const route of routeList)
      template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
        RouteKey: routeKeyOf(route),
        Target: target(route.group),
      });
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "$default",
      Target: target("system"),
    });
  });

  it("answers CORS preflights only on the browser routes' paths, from the system function", () => {
    const preflights = resourcesOfType(template, "AWS::ApiGatewayV2::Route")
      .map(([, r]) => r.Properties)
      .filter((p) => String(p.RouteKey).startsWith("OPTIONS "));
    expect(preflights.map((p) => p.RouteKey).sort()).toEqual(
      ["OPTIONS /sessions", "OPTIONS /tokens", "OPTIONS /tokens/{id}"].sort(),
    );
    for (const p of preflights) expect(p.Target).toEqual(target("system"));
    // No API-wide CORS configuration: it would answer preflights on management and root routes too.
    for (const [, api] of resourcesOfType(template, "AWS::ApiGatewayV2::Api"))
      expect(api.Properties.CorsConfiguration).toBeUndefined();
  });

  it("logs access as JSON and throttles on the default stage", () => {
    const [[, stage]] = resourcesOfType(template, "AWS::ApiGatewayV2::Stage") as [[string, Resource]];
    expect(stage.Properties).toMatchObject({
      StageName: "$default",
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingBurstLimit: 200, ThrottlingRateLimit: 100 },
      AccessLogSettings: {
        DestinationArn: { "Fn::GetAtt": [expect.stringMatching(/^HttpAccessLogs/), "Arn"] },
      },
    });
    const format = JSON.parse((stage.Properties.AccessLogSettings as { Format: string }).Format);
    expect(format).toMatchObject({
      requestId: "$context.requestId",
      routeKey: "$context.routeKey",
      status: "$context.status",
    });
    expect(JSON.stringify(format)).not.toMatch(/header|apiKey/i);
    // A path holds token ids (an id expression can make one the card number): the route is logged, not the path.
    expect(JSON.stringify(format)).not.toMatch(/\$context\.path|rawPath|querystring/i);
  });

  it("outputs the API URL and the table name", () => {
    template.hasOutput("ApiUrl", { Value: Match.objectLike({ "Fn::Join": Match.anyValue() }) });
    template.hasOutput("TableName", { Value: tableRef() });
  });
});

describe("functions", () => {
  const newestNode = Runtime.ALL.map((r) => r.name)
    .filter((name) => /^nodejs\d+\.x$/.test(name))
    .sort((a, b) => Number.parseInt(a.slice(6), 10) - Number.parseInt(b.slice(6), 10))
    .at(-1);

  it.each(FUNCTION_GROUPS)("%s: newest Node runtime, arm64, tracing, sizing, own log group", (group) => {
    const props = template.toJSON().Resources[fnId(group)].Properties;
    expect(Number.parseInt(props.Runtime.slice(6), 10)).toBeGreaterThanOrEqual(22);
    expect(props.Runtime).toBe(newestNode);
    expect(props).toMatchObject({
      Architectures: ["arm64"],
      TracingConfig: { Mode: "Active" },
      MemorySize: 512,
      Timeout: API_FUNCTION_TIMEOUT.toSeconds(),
      Handler: "index.handler",
    });
    const ownLogGroup = idOf(stack.http.functions[group].logGroup);
    expect(props.LoggingConfig).toEqual({ LogGroup: { Ref: ownLogGroup } });
    expect(template.toJSON().Resources[ownLogGroup].Properties).toEqual({ RetentionInDays: 30 });
  });

  it.each(FUNCTION_GROUPS)(
    "%s: times out below API Gateway's 29 s, and after the longest wait a request may hold",
    (group) => {
      const timeout = template.toJSON().Resources[fnId(group)].Properties.Timeout as number;
      // The table's calls fail within their bounded attempts (an outage answers 503 before the function dies).
      const tableWorstCase =
        (TABLE_CALL_LIMITS.maxAttempts *
          (TABLE_CALL_LIMITS.connectionTimeoutMs + TABLE_CALL_LIMITS.requestTimeoutMs)) /
        1000;

      expect(timeout).toBeLessThan(API_GATEWAY_TIMEOUT_SECONDS);
      expect(timeout).toBeGreaterThan(tableWorstCase);
      expect(timeout).toBeGreaterThan(PROXY_TIMEOUT_MS / 1000);
      expect(timeout).toBeGreaterThan(loadConfig({ SVC_MODE: "local" }).syncReactTimeoutMs / 1000);
    },
  );

  it.each(FUNCTION_GROUPS)("%s: environment matches the access table", (group) => {
    const env = template.toJSON().Resources[fnId(group)].Properties.Environment.Variables;
    expect(env).toMatchObject({
      SVC_MODE: "aws",
      LOG_LEVEL: "INFO",
      // The group names the metrics' `service` dimension; the namespace is this deployment's own.
      POWERTOOLS_SERVICE_NAME: group,
      POWERTOOLS_METRICS_NAMESPACE: `svc-vault/${stack.vault.name}`,
      // Source-mapped traces; Object.prototype.__proto__ throws in every function (process integrity).
      NODE_OPTIONS: "--enable-source-maps --disable-proto=throw",
      // Every group: shared/config.ts requires SVC_TABLE_NAME in AWS mode (system's is name only).
      SVC_TABLE_NAME: tableRef(),
    });
    if (FUNCTION_ACCESS[group].rootKeyParameter)
      expect(env.SVC_ROOT_KEY_PARAMETER).toBe("/svc-vault/root-key-hash");
    else expect(env).not.toHaveProperty("SVC_ROOT_KEY_PARAMETER");
    expect(env).not.toHaveProperty("SVC_ROOT_KEY");
    expect(env).not.toHaveProperty("SVC_TEST_CLOCK");
  });
});

describe("environment", () => {
  it("sets on every function only variables shared/config.ts reads or its libraries document", () => {
    const known = new Set<string>([...CONFIG_VARIABLES, ...Object.keys(LIBRARY_VARIABLES)]);
    const functions = resourcesOfType(template, "AWS::Lambda::Function");
    expect(functions.length).toBeGreaterThan(0);
    for (const [id, fn] of functions) {
      const environment = fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined;
      const variables = Object.keys(environment?.Variables ?? {});
      expect(
        variables.filter((name) => !known.has(name)),
        id,
      ).toEqual([]);
    }
  });
});

describe("process integrity", () => {
  it("runs every function of the service with --disable-proto=throw", () => {
    const functions = Object.entries(template.findResources("AWS::Lambda::Function")).filter(
      ([, resource]) => resource.Properties?.Environment?.Variables?.SVC_MODE === "aws",
    );
    // The API groups plus the sweeper and the callback consumer.
    expect(functions.length).toBeGreaterThanOrEqual(FUNCTION_GROUPS.length + 2);
    for (const [id, resource] of functions) {
      const options: string = resource.Properties.Environment.Variables.NODE_OPTIONS ?? "";
      expect(options.split(/\s+/), id).toContain("--disable-proto=throw");
    }
  });
});

describe("least privilege", () => {
  const writes = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
  ];
  const indexArn = () => ({ "Fn::Join": ["", [tableArn(), "/index/GSI1"]] });

  it("logs reads the table and its index, and writes nothing but rate-limit counters", () => {
    const statements = statementsOf("logs");
    expect(actionsOf(statements, "dynamodb:").sort()).toEqual(
      [...TABLE_READ_ACTIONS, "dynamodb:UpdateItem"].sort(),
    );
    for (const action of [
      ...writes.filter((a) => a !== "dynamodb:UpdateItem"),
      "dynamodb:ConditionCheckItem",
    ])
      expect(actionsOf(statements)).not.toContain(action);
    expect(actionsOf(statements)).not.toContain("dynamodb:Scan");
    const [read] = statementsWithAction(statements, "dynamodb:GetItem");
    expect(asArray(read?.Resource)).toEqual([tableArn(), indexArn()]);
    const [counters] = statementsWithAction(statements, "dynamodb:UpdateItem");
    expect(counters).toMatchObject({
      Action: "dynamodb:UpdateItem",
      Resource: tableArn(),
      Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["RATE#*"] } },
    });
  });

  it.each(["tenants", "applications"] as const)("%s reads and writes the table, and never scans", (group) => {
    const statements = statementsOf(group);
    expect(actionsOf(statements, "dynamodb:").sort()).toEqual(
      [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS].sort(),
    );
    for (const statement of statementsWithAction(statements, "dynamodb:")) {
      const resources = asArray(statement.Resource);
      // Writes go to the table only; the index ARN appears only with read actions.
      if (asArray(statement.Action).some((a) => writes.includes(a))) expect(resources).toEqual([tableArn()]);
      else expect(resources).toEqual([tableArn(), indexArn()]);
    }
  });

  it("system has no DynamoDB action at all", () => {
    expect(actionsOf(statementsOf("system"), "dynamodb:")).toEqual([]);
  });

  it("only system and tenants may read the root key parameter, and only ssm:GetParameter on its ARN", () => {
    const parameterArn = {
      "Fn::Join": [
        "",
        [
          "arn:",
          { Ref: "AWS::Partition" },
          ":ssm:",
          { Ref: "AWS::Region" },
          ":",
          { Ref: "AWS::AccountId" },
          ":parameter/svc-vault/root-key-hash",
        ],
      ],
    };
    for (const group of FUNCTION_GROUPS) {
      const ssm = statementsWithAction(statementsOf(group), "ssm:");
      if (group === "system" || group === "tenants") {
        expect(ssm, group).toEqual([{ Effect: "Allow", Action: "ssm:GetParameter", Resource: parameterArn }]);
      } else expect(ssm, group).toEqual([]);
    }
  });

  it("grants '*' resources only for X-Ray, the data key only where the access table says, queues only to reactors and tenants (send), no managed policies", () => {
    const keyId = idOf(stack.data.dataKey);
    const receiptKeyId = idOf(stack.data.receiptKey);
    for (const group of FUNCTION_GROUPS) {
      const statements = statementsOf(group);
      const anyResource = statements.filter((s) => asArray(s.Resource).includes("*"));
      expect(actionsOf(anyResource).sort()).toEqual(["xray:PutTelemetryRecords", "xray:PutTraceSegments"]);
      const onKey = (id: string) =>
        statements.filter(
          (s) => JSON.stringify(asArray(s.Resource)) === JSON.stringify([{ "Fn::GetAtt": [id, "Arn"] }]),
        );
      const kmsStatements = statements.filter(
        (s) => actionsOf([s]).some((a) => a.startsWith("kms:")) && !onKey(receiptKeyId).includes(s),
      );
      const keys = GROUP_DATA_KEYS[group];
      expect(actionsOf(kmsStatements).sort()).toEqual(
        keys !== "none" ? ["kms:Decrypt", "kms:GenerateDataKey"] : [],
      );
      // The receipt key: Sign only where receipts are signed, its public key where it is published.
      const receiptUse: GroupAccess["receiptKey"] = (FUNCTION_ACCESS[group] as GroupAccess).receiptKey;
      expect(actionsOf(onKey(receiptKeyId)).sort()).toEqual(
        receiptUse === "sign" ? ["kms:GetPublicKey", "kms:Sign"] : receiptUse ? ["kms:GetPublicKey"] : [],
      );
      for (const s of kmsStatements) {
        expect(asArray(s.Resource)).toEqual([{ "Fn::GetAtt": [keyId, "Arn"] }]);
        // The system function (GET /healthz) only ever handles the readiness probe's own data key; the
        // functions that never open token data only the tenants' answer keys (no data or HMAC key).
        expect(s.Condition, group).toEqual(
          keys === "probe"
            ? { StringEquals: { "kms:EncryptionContext:purpose": "readiness-probe" } }
            : keys === "answers"
              ? { StringLike: { "kms:EncryptionContext:key_id": ["answers-*"] } }
              : undefined,
        );
      }
      // Reactors queue callbacks; tenants start key rewrap jobs (their first page).
      const queue = { reactors: stack.data.callbackQueue, tenants: stack.rewrap.queue }[group as string];
      const sqs = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith("sqs:")));
      expect(actionsOf(sqs)).toEqual(queue ? ["sqs:SendMessage"] : []);
      if (queue)
        for (const s of sqs) expect(asArray(s.Resource)).toEqual([{ "Fn::GetAtt": [idOf(queue), "Arn"] }]);
      expect(statements.every((s) => s.Effect === "Allow")).toBe(true);
      expect(actionsOf(statements).some((a) => a.endsWith("*"))).toBe(false);
    }
    for (const [, role] of resourcesOfType(template, "AWS::IAM::Role"))
      expect(role.Properties).not.toHaveProperty("ManagedPolicyArns");
  });
});

describe("key rewrap worker", () => {
  it("consumes its queue one page at a time with partial failures, and pages go to a dead-letter queue", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: { "Fn::GetAtt": [idOf(stack.rewrap.queue), "Arn"] },
      BatchSize: 1,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: {
        deadLetterTargetArn: { "Fn::GetAtt": [idOf(stack.rewrap.deadLetterQueue), "Arn"] },
        maxReceiveCount: 5,
      },
    });
  });

  it("may queue its own next page past Lambda's 16-turn loop detection (a rewrap of more than 400 tokens)", () => {
    const worker = template.findResources("AWS::Lambda::Function", {
      Properties: { Description: "svc-vault key rewrap worker (SQS consumer)" },
    });
    expect(Object.values(worker).map((f) => f.Properties.RecursiveLoop)).toEqual(["Allow"]);
  });
});

describe("sandbox runners", () => {
  const runners = () => stack.http.sandboxRunners;
  const runnerRoleArn = () => ({ "Fn::GetAtt": [idOf(runners().role), "Arn"] });
  const prefixArn = () => ({
    "Fn::Join": [
      "",
      [
        "arn:",
        { Ref: "AWS::Partition" },
        ":lambda:",
        { Ref: "AWS::Region" },
        ":",
        { Ref: "AWS::AccountId" },
        `:function:${runners().prefix}*`,
      ],
    ],
  });
  const templateCode = () =>
    (template.toJSON().Resources[logicalIdOfFunction(stack, runners().template)] as Resource).Properties
      .Code as { S3Bucket: unknown; S3Key: string };
  /** The functions that may touch runners: the access table's sandbox groups and the callback consumer. */
  const expectedAccess = (): [string, "run" | "prepare"][] => [
    ...FUNCTION_GROUPS.flatMap((group): [string, "run" | "prepare"][] => {
      const access: GroupAccess = FUNCTION_ACCESS[group];
      return access.sandbox ? [[idOf(stack.http.functions[group].role), access.sandbox]] : [];
    }),
    [idOf(stack.callbacks.fn.role), "run"],
  ];

  it("names runners from a prefix short enough for a tenant UUID and a version (64 characters)", () => {
    expect(runners().prefix).toMatch(/^SvcVault-[0-9a-f]{6}-$/);
    expect(runners().prefix.length + 36 + 1 + 8).toBeLessThanOrEqual(64);
    template.hasOutput("SandboxRunnerPrefix", { Value: runners().prefix });
  });

  it("gives the runner role nothing but writing to the runners' log group: no table, key, queue or parameter", () => {
    const roleId = idOf(runners().role);
    const statements = resourcesOfType(template, "AWS::IAM::Policy")
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    expect(actionsOf(statements).sort()).toEqual(["logs:CreateLogStream", "logs:PutLogEvents"]);
    for (const s of statements)
      expect(asArray(s.Resource)).toEqual([{ "Fn::GetAtt": [idOf(runners().logGroup), "Arn"] }]);
    const role = template.toJSON().Resources[roleId] as Resource;
    expect(role.Properties).not.toHaveProperty("ManagedPolicyArns");
    expect(role.Properties).not.toHaveProperty("Policies");
    expect(JSON.stringify(role.Properties.AssumeRolePolicyDocument)).toContain("lambda.amazonaws.com");
    // Nothing anywhere names the runner role as a grantee of the table or the key.
    const mentions = resourcesOfType(template, "AWS::KMS::Key")
      .concat(resourcesOfType(template, "AWS::DynamoDB::Table"))
      .map(([, r]) => JSON.stringify(r.Properties));
    for (const text of mentions) expect(text).not.toContain(roleId);
  });

  it("the template (bundle and sizing, never invoked) holds no grant but its logs and tracing, and nothing secret", () => {
    const actions = actionsOf(roleStatements(template, stack, runners().template));
    expect(actions.every((a) => a.startsWith("logs:") || a.startsWith("xray:"))).toBe(true);
    const fn = template.toJSON().Resources[logicalIdOfFunction(stack, runners().template)] as Resource;
    const variables =
      (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    expect(Object.keys(variables).filter((k) => /TABLE|KMS|ROOT|KEY|RUNNER/.test(k))).toEqual([]);
    expect(fn.Properties).toMatchObject({ MemorySize: 1024, Timeout: 240, Architectures: ["arm64"] });
  });

  it("lets only the sandbox groups and the callback consumer create (and, to run, wait for and invoke) functions under the prefix", () => {
    const allowed = new Map(expectedAccess());
    const seen = new Map<string, string[]>();
    for (const [, policy] of resourcesOfType(template, "AWS::IAM::Policy")) {
      const roles = JSON.stringify(policy.Properties.Roles);
      for (const s of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
        const lambdaActions = asArray(s.Action).filter((a) => a.startsWith("lambda:"));
        if (lambdaActions.length === 0) continue;
        const roleId = [...allowed.keys()].find((id) => roles === JSON.stringify([{ Ref: id }]));
        expect(roleId, `lambda actions granted to ${roles}`).toBeDefined();
        expect(asArray(s.Resource)).toEqual([prefixArn()]);
        seen.set(String(roleId), [...(seen.get(String(roleId)) ?? []), ...lambdaActions]);
      }
    }
    expect([...seen.keys()].sort()).toEqual([...allowed.keys()].sort());
    for (const [roleId, access] of allowed)
      expect(seen.get(roleId)?.sort(), roleId).toEqual(
        access === "run"
          ? ["lambda:CreateFunction", "lambda:GetFunction", "lambda:InvokeFunction", "lambda:TagResource"]
          : ["lambda:CreateFunction", "lambda:TagResource"],
      );
    expect([...allowed.values()].filter((a) => a === "prepare")).toHaveLength(1);
  });

  it("scopes iam:PassRole to the runner role passed to Lambda, and s3:GetObject to the runner bundle", () => {
    const allowed = expectedAccess().map(([id]) => id);
    const { S3Bucket, S3Key } = templateCode();
    for (const [, policy] of resourcesOfType(template, "AWS::IAM::Policy")) {
      const roles = JSON.stringify(policy.Properties.Roles);
      const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      const passRole = statementsWithAction(statements, "iam:");
      const s3 = statementsWithAction(statements, "s3:");
      const isAllowed = allowed.some((id) => roles === JSON.stringify([{ Ref: id }]));
      if (!isAllowed) {
        expect(passRole, roles).toEqual([]);
        expect(s3, roles).toEqual([]);
        continue;
      }
      expect(passRole).toEqual([
        {
          Effect: "Allow",
          Action: "iam:PassRole",
          Resource: runnerRoleArn(),
          Condition: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } },
        },
      ]);
      expect(s3).toEqual([
        {
          Effect: "Allow",
          Action: "s3:GetObject",
          Resource: {
            "Fn::Join": ["", ["arn:", { Ref: "AWS::Partition" }, ":s3:::", S3Bucket, `/${S3Key}`]],
          },
        },
      ]);
    }
  });

  it("tells the functions that run code how runners are made, and no other function", () => {
    const { S3Bucket, S3Key } = templateCode();
    const runnerEnv = {
      SVC_RUNNER_PREFIX: runners().prefix,
      SVC_RUNNER_ROLE_ARN: runnerRoleArn(),
      SVC_RUNNER_CODE_BUCKET: S3Bucket,
      SVC_RUNNER_CODE_KEY: S3Key,
      SVC_RUNNER_RUNTIME: "nodejs24.x",
      SVC_RUNNER_HANDLER: "index.handler",
      SVC_RUNNER_MEMORY_MB: "1024",
      SVC_RUNNER_TIMEOUT_SECONDS: "240",
      SVC_RUNNER_ARCHITECTURE: "arm64",
      SVC_RUNNER_LOG_GROUP: { Ref: idOf(runners().logGroup) },
      SVC_STACK_NAME: "SvcVault",
    };
    for (const group of FUNCTION_GROUPS) {
      const env = template.toJSON().Resources[fnId(group)].Properties.Environment.Variables;
      const access: GroupAccess = FUNCTION_ACCESS[group];
      if (!access.sandbox) {
        expect(Object.keys(env).filter((k) => k.startsWith("SVC_RUNNER_") || k === "SVC_API_URL")).toEqual(
          [],
        );
        continue;
      }
      expect(env, group).toMatchObject(runnerEnv);
      if (access.sandbox === "run") expect(env.SVC_API_URL).toBeDefined();
      else expect(env).not.toHaveProperty("SVC_API_URL");
    }
    const consumer = template.toJSON().Resources[logicalIdOfFunction(stack, stack.callbacks.fn)];
    expect(consumer.Properties.Environment.Variables).toMatchObject(runnerEnv);
  });

  it("bundles the sandbox child script and the packages tenant code may require next to the runner's code", () => {
    const assetDir = join(outdir, `asset.${templateCode().S3Key.replace(/\.zip$/, "")}`);
    expect(readdirSync(assetDir).sort()).toEqual(
      expect.arrayContaining([...CHILD_FILES, "index.mjs", "sandbox-packages"]),
    );
    expect(readdirSync(join(assetDir, "sandbox-packages")).sort()).toEqual(["built", "reactor-errors.cjs"]);
    expect(readdirSync(join(assetDir, "sandbox-packages", "built"))).toEqual(
      expect.arrayContaining(["manifest.json", "axios.js", "jose.js", "uuid.js"]),
    );
  });
});

describe("invitation e-mail", () => {
  it("lets only the members function send e-mail, from the configured sender's identity", () => {
    for (const group of FUNCTION_GROUPS) {
      const statements = statementsOf(group);
      const ses = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith("ses:")));
      if (group !== "members") {
        expect(ses, group).toEqual([]);
        continue;
      }
      expect(actionsOf(ses)).toEqual(["ses:SendEmail"]);
      const resources = JSON.stringify(ses.flatMap((s) => asArray(s.Resource)));
      expect(resources).toContain("identity/no-reply@example.com");
      expect(resources).not.toContain("identity/*");
    }
  });
});

describe("expiry sweep", () => {
  it("runs the sweep function every 15 minutes with table access and nothing else", () => {
    const sweepId = logicalIdOfFunction(stack, stack.sweeper.fn);
    const rules = resourcesOfType(template, "AWS::Events::Rule");
    expect(rules).toHaveLength(1);
    const [[, rule]] = rules as [[string, Resource]];
    expect(rule.Properties).toMatchObject({ ScheduleExpression: "rate(15 minutes)", State: "ENABLED" });
    expect(JSON.stringify(rule.Properties.Targets)).toContain(sweepId);

    const statements = roleStatements(template, stack, stack.sweeper.fn);
    const actions = actionsOf(statements);
    expect(actions).toEqual(expect.arrayContaining([...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS]));
    expect(actions.filter((a) => /^(kms|ssm|sqs):/.test(a))).toEqual([]);
    const fn = template.toJSON().Resources[sweepId] as Resource;
    expect(fn.Properties).toMatchObject({
      Environment: { Variables: { SVC_MODE: "aws", SVC_TABLE_NAME: tableRef() } },
    });
  });
});

describe("stateful resources", () => {
  it("the table matches the local bootstrap's CreateTable exactly", async () => {
    let created: CreateTableCommandInput | undefined;
    const notFound = Object.assign(new Error("not found"), { name: "ResourceNotFoundException" });
    const fakeClient = {
      send: async (command: unknown) => {
        if (command instanceof CreateTableCommand) created = command.input;
        else throw notFound;
        return {};
      },
    } as unknown as DynamoDBClient;
    await ensureTable(fakeClient, "svc-vault");

    const [[, table]] = resourcesOfType(template, "AWS::DynamoDB::Table") as [[string, Resource]];
    const sortByName = <T extends { AttributeName?: string }>(list: T[] = []) =>
      [...list].sort((a, b) => String(a.AttributeName).localeCompare(String(b.AttributeName)));
    expect(table.Properties.KeySchema).toEqual(created?.KeySchema);
    expect(sortByName(table.Properties.AttributeDefinitions as [])).toEqual(
      sortByName(created?.AttributeDefinitions),
    );
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(created?.GlobalSecondaryIndexes);
    expect(table.Properties.BillingMode).toBe(created?.BillingMode);
  });

  it("the table keeps its data: PITR, TTL on `ttl`, GSI1, retained, deletion-protected", () => {
    template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
      Properties: Match.objectLike({
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
        DeletionProtectionEnabled: true,
        GlobalSecondaryIndexes: [
          Match.objectLike({ IndexName: "GSI1", Projection: { ProjectionType: "ALL" } }),
        ],
      }),
    });
  });

  it("the data key rotates, is retained and carries an alias named after the stack, not a fixed one", () => {
    const keyId = idOf(stack.data.dataKey);
    expect(stack.vault.name).toMatch(/^SvcVault-[0-9a-f]{6}$/);
    template.hasResource("AWS::KMS::Key", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({ EnableKeyRotation: true }),
    });
    template.hasResourceProperties("AWS::KMS::Alias", {
      AliasName: `alias/${stack.vault.name}-data`,
      TargetKeyId: { "Fn::GetAtt": [keyId, "Arn"] },
    });
  });

  // Review of 27 Nov: the keys' default policy (the account root: kms:*) handed every use to IAM, so any
  // principal allowed kms:Decrypt or kms:Sign on "*" (administrators, power users, the deploy role) could unwrap
  // every tenant's data key or sign deletion receipts.
  const keyStatementsOf = (key: IConstruct) =>
    ((template.toJSON().Resources[idOf(key)] as Resource).Properties.KeyPolicy as { Statement: Statement[] })
      .Statement;
  const byAccount = (s: Statement) => JSON.stringify(s.Principal).includes(":root");
  const CRYPTO = [
    "Decrypt",
    "Encrypt",
    "GenerateDataKey",
    "ReEncryptFrom",
    "ReEncryptTo",
    "Sign",
    "CreateGrant",
  ];
  const allows = (pattern: string, action: string) =>
    new RegExp(`^${pattern.replace(/\*/g, ".*")}$`, "i").test(`kms:${action}`);

  it.each(["dataKey", "receiptKey"] as const)(
    "the %s's policy gives the account (IAM) no cryptographic use",
    (name) => {
      const granted = keyStatementsOf(stack.data[name])
        .filter((s) => s.Effect === "Allow" && byAccount(s))
        .flatMap((s) => asArray(s.Action))
        .filter((pattern) => CRYPTO.some((action) => allows(pattern, action)));
      expect(granted).toEqual([]);
    },
  );

  it("the data key's policy lets exactly the roles that handle data keys (and the readiness probe's) use it", () => {
    const roles = keyStatementsOf(stack.data.dataKey)
      .filter((s) => s.Effect === "Allow" && !byAccount(s))
      .flatMap((s) => asArray((s.Principal as { AWS: unknown }).AWS))
      .map((principal) => JSON.stringify(principal));
    const expected = stack.vault.functions
      .filter((f) => f.dataKeyUse !== "none")
      .map((f) => JSON.stringify({ "Fn::GetAtt": [idOf(f.role), "Arn"] }));
    expect(new Set(roles)).toEqual(new Set(expected));
  });

  it("the callback queue redrives to its DLQ after 5 receives; both are encrypted and TLS-only", () => {
    const dlqId = idOf(stack.data.callbackDeadLetterQueue);
    const queueId = idOf(stack.data.callbackQueue);
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [dlqId, "Arn"] }, maxReceiveCount: 5 },
      SqsManagedSseEnabled: true,
    });
    for (const id of [queueId, dlqId]) {
      template.hasResourceProperties("AWS::SQS::Queue", Match.objectLike({ SqsManagedSseEnabled: true }));
      template.hasResourceProperties("AWS::SQS::QueuePolicy", {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
          ]),
        },
      });
    }
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("has no unacknowledged error or warning", () => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(app);
    const findings = (severity: string) =>
      report.violations
        .filter((v) => v.severity === severity)
        .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(", ")}`);
    expect(findings("error")).toEqual([]);
    expect(findings("warning")).toEqual([]);
    // cdk-nag v3 reports through validation, not annotations; CDK's own annotations must be clean too.
    expect(Annotations.fromStack(stack).findError("*", Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning("*", Match.anyValue())).toEqual([]);
  });

  it("fails synthesis of the app on a finding (negative control)", () => {
    const probe = new App({ context: { ...CDK_CONTEXT, "aws:cdk:bundling-stacks": [] } });
    const probeStack = buildApp(probe);
    new Queue(probeStack, "UnprotectedQueue");
    expect(() => probe.synth()).toThrow(/AwsSolutions-SQS3[\s\S]*UnprotectedQueue/);
  });
});

describe("bundles", () => {
  it("ships the Elements bundles beside the sessions function, which serves them", async () => {
    const key: string = template.toJSON().Resources[fnId("sessions")].Properties.Code.S3Key;
    const dir = join(assemblyDir, `asset.${key.replace(/\.zip$/, "")}`);
    for (const name of ["elements.js", "frame.js"])
      expect(readFileSync(join(dir, "elements-assets", name), "utf8")).toMatch(/^\S/);
    const script = `
      const { handler } = await import(${JSON.stringify(join(dir, "index.mjs"))});
      const res = await handler({ version: "2.0", routeKey: "GET /elements/v1/elements.js", rawPath: "/elements/v1/elements.js",
        rawQueryString: "", headers: {}, isBase64Encoded: false,
        requestContext: { requestId: "smoke", routeKey: "GET /elements/v1/elements.js", stage: "$default",
          http: { method: "GET", path: "/elements/v1/elements.js", protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "t" } } },
        { awsRequestId: "smoke", getRemainingTimeInMillis: () => 29000 });
      console.log(JSON.stringify({ status: res.statusCode, type: res.headers["content-type"], global: res.body.includes("SvcElements") }));`;
    const result = JSON.parse((await runAsLambda(script)).trim().split("\n").at(-1) ?? "{}");
    expect(result).toEqual({ status: 200, type: "text/javascript; charset=utf-8", global: true });
  });

  // Each function's real bundle (ESM, createRequire banner, bundled SDK) loads in Node and answers requests
  // that need no AWS call. /healthz answers not ready: this environment has no data key (SVC_KMS_KEY_ID).
  const cases: [FunctionGroup, string, string, string, number][] = [
    ["system", "GET /healthz", "GET", "/healthz", 503],
    ["system", "$default", "GET", "/no-such-route", 404],
    ["tenants", "GET /tenants/self", "GET", "/tenants/self", 401],
    ["applications", "GET /applications", "GET", "/applications", 401],
    ["logs", "GET /logs", "GET", "/logs", 401],
  ];

  it("answers through each function's bundled handler", async () => {
    // The code's S3 key is <asset hash>.zip; the staged bundle sits in the assembly as asset.<hash>/.
    const assetPath = (group: FunctionGroup) => {
      const key: string = template.toJSON().Resources[fnId(group)].Properties.Code.S3Key;
      return join(assemblyDir, `asset.${key.replace(/\.zip$/, "")}`, "index.mjs");
    };
    const requests = cases.map(([group, routeKey, method, path]) => ({
      file: assetPath(group),
      routeKey,
      method,
      path,
    }));
    const script = `
      const results = [];
      for (const r of ${JSON.stringify(requests)}) {
        const { handler } = await import(r.file);
        const event = { version: "2.0", routeKey: r.routeKey, rawPath: r.path, rawQueryString: "", headers: {},
          isBase64Encoded: false,
          requestContext: { requestId: "smoke", routeKey: r.routeKey, stage: "$default",
            http: { method: r.method, path: r.path, protocol: "HTTP/1.1", sourceIp: "192.0.2.1", userAgent: "t" } } };
        const res = await handler(event, { awsRequestId: "smoke", getRemainingTimeInMillis: () => 29000 });
        results.push({ status: res.statusCode, type: res.headers["content-type"], body: JSON.parse(res.body) });
      }
      console.log(JSON.stringify(results));`;
    const stdout = await runAsLambda(script);
    const results = JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]");
    expect(results.map((r: { status: number }) => r.status)).toEqual(cases.map((c) => c[4]));
    expect(results[0].body.errors).toEqual({ keys: ["The master key cannot wrap or unwrap a data key."] });
    for (const r of results) expect(r.type).toBe("application/problem+json");
  });
});
