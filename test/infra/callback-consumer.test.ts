import { rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type App, type CfnElement, Stack, Validations } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiFunction, TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from "#lib/constructs/api-function.ts";
import {
  CALLBACK_CONSUMER_TIMEOUT,
  CALLBACK_QUEUE_VISIBILITY_TIMEOUT,
  CallbackConsumer,
} from "#lib/constructs/callback-consumer.ts";
import { SandboxRunners } from "#lib/constructs/sandbox-runners.ts";
import { CALLBACK_MAX_RECEIVE_COUNT, VaultData } from "#lib/constructs/vault-data.ts";
import { MAX_ATTEMPTS } from "#shared/domain/reactors/callbacks.ts";
import {
  actionsOf,
  asArray,
  logicalIdOfFunction,
  type Resource,
  resourcesOfType,
  roleStatements,
  runAsLambda,
  statementsWithAction,
  tempApp,
} from "./template.ts";

/*
 * A small stack holding what the consumer is wired to in the real one (VaultData's table, key, queue and
 * DLQ), the consumer, and a producer function standing in for the reactors function. Synthesized with
 * cdk.json's context, real bundling and cdk-nag's AwsSolutions checks, as buildApp does.
 */

let outdir: string;
let app: App;
let stack: Stack;
let data: VaultData;
let consumer: CallbackConsumer;
let producer: ApiFunction;
let runners: SandboxRunners;
let template: Template;
let assemblyDir: string;

beforeAll(() => {
  ({ app, outdir } = tempApp("svc-cdk-callbacks-"));
  stack = new Stack(app, "CallbackConsumerTest");
  data = new VaultData(stack, "Data", { keyAlias: "alias/callback-consumer-test" });
  runners = new SandboxRunners(stack, "SandboxRunners");
  consumer = new CallbackConsumer(stack, "Callbacks", {
    queue: data.callbackQueue,
    deadLetterQueue: data.callbackDeadLetterQueue,
    table: data.table,
    dataKey: data.dataKey,
    sandbox: { runners, apiUrl: "https://api.example.com" },
  });
  producer = new ApiFunction(stack, "Producer", { group: "system" });
  consumer.grantSend(producer);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  // Throws when cdk-nag reports any unacknowledged finding.
  assemblyDir = app.synth().directory;
  template = Template.fromStack(stack);
}, 120_000);

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const idOf = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const arnOf = (construct: IConstruct) => ({ "Fn::GetAtt": [idOf(construct), "Arn"] });

describe("callback consumer", () => {
  it("consumes the callback queue in batches of 10 with partial batch responses, on at most 50 instances", () => {
    const mappings = resourcesOfType(template, "AWS::Lambda::EventSourceMapping");
    expect(mappings).toHaveLength(1);
    const [[, mapping]] = mappings as [[string, Resource]];
    expect(mapping.Properties).toEqual({
      BatchSize: 10,
      EventSourceArn: arnOf(data.callbackQueue),
      FunctionName: { Ref: logicalIdOfFunction(stack, consumer.fn) },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      // One tenant's backlog cannot scale the consumer into the account concurrency the API functions need.
      ScalingConfig: { MaximumConcurrency: 50 },
    });
  });

  it("runs long enough for the longest reaction, and the queue hides a message six times as long", () => {
    const fn = template.toJSON().Resources[logicalIdOfFunction(stack, consumer.fn)] as Resource;
    expect(fn.Properties.Timeout).toBe(CALLBACK_CONSUMER_TIMEOUT.toSeconds());
    expect(CALLBACK_CONSUMER_TIMEOUT.toSeconds()).toBeGreaterThanOrEqual(210 + 10);
    const queue = template.toJSON().Resources[idOf(data.callbackQueue)] as Resource;
    expect(queue.Properties.VisibilityTimeout).toBe(CALLBACK_QUEUE_VISIBILITY_TIMEOUT.toSeconds());
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * Number(fn.Properties.Timeout));
    expect(fn.Properties.Environment).toEqual({
      Variables: expect.objectContaining({
        SVC_MODE: "aws",
        SVC_TABLE_NAME: { Ref: idOf(data.table) },
        SVC_KMS_KEY_ID: arnOf(data.dataKey),
        SVC_CALLBACK_QUEUE_URL: { Ref: idOf(data.callbackQueue) },
        SVC_CALLBACK_DLQ_URL: { Ref: idOf(data.callbackDeadLetterQueue) },
        SVC_RUNNER_PREFIX: runners.prefix,
        SVC_RUNNER_ROLE_ARN: arnOf(runners.role),
        SVC_API_URL: "https://api.example.com",
      }),
    });
  });

  it("redrives to the DLQ after as many receives as the consumer's attempts", () => {
    expect(CALLBACK_MAX_RECEIVE_COUNT).toBe(MAX_ATTEMPTS);
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: { deadLetterTargetArn: arnOf(data.callbackDeadLetterQueue), maxReceiveCount: 5 },
    });
  });

  it("grants the consumer exactly: consume on the queue, send on the DLQ, the table, the key, the runners, logs, X-Ray", () => {
    const statements = roleStatements(template, stack, consumer.fn);
    const sqs = statementsWithAction(statements, "sqs:");
    const onQueue = sqs.filter(
      (s) => JSON.stringify(s.Resource) === JSON.stringify(arnOf(data.callbackQueue)),
    );
    const onDlq = sqs.filter(
      (s) => JSON.stringify(s.Resource) === JSON.stringify(arnOf(data.callbackDeadLetterQueue)),
    );
    expect(onQueue.length + onDlq.length).toBe(sqs.length);
    expect(actionsOf(onQueue).sort()).toEqual([
      "sqs:ChangeMessageVisibility",
      "sqs:DeleteMessage",
      "sqs:GetQueueAttributes",
      "sqs:GetQueueUrl",
      "sqs:ReceiveMessage",
    ]);
    expect(actionsOf(onDlq)).toEqual(["sqs:SendMessage"]);

    const kms = statementsWithAction(statements, "kms:");
    expect(actionsOf(kms).sort()).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]);
    for (const s of kms) expect(asArray(s.Resource)).toEqual([arnOf(data.dataKey)]);

    expect(actionsOf(statements, "dynamodb:").sort()).toEqual(
      [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS].sort(),
    );
    const anyResource = statements.filter((s) => asArray(s.Resource).includes("*"));
    expect(actionsOf(anyResource).sort()).toEqual(["xray:PutTelemetryRecords", "xray:PutTraceSegments"]);
    const services = new Set(actionsOf(statements).map((a) => a.split(":")[0]));
    const runnerActions = statementsWithAction(statements, "lambda:");
    expect(actionsOf(runnerActions).sort()).toEqual([
      "lambda:CreateFunction",
      "lambda:GetFunction",
      "lambda:InvokeFunction",
      "lambda:TagResource",
    ]);
    expect(JSON.stringify(runnerActions.map((s) => s.Resource))).toContain(`:function:${runners.prefix}*`);
    expect(statementsWithAction(statements, "iam:")).toEqual([
      expect.objectContaining({
        Action: "iam:PassRole",
        Resource: arnOf(runners.role),
        Condition: { StringEquals: { "iam:PassedToService": "lambda.amazonaws.com" } },
      }),
    ]);
    expect(actionsOf(statementsWithAction(statements, "s3:"))).toEqual(["s3:GetObject"]);
    expect([...services].sort()).toEqual(["dynamodb", "iam", "kms", "lambda", "logs", "s3", "sqs", "xray"]);
    expect(statements.every((s) => s.Effect === "Allow")).toBe(true);
    expect(actionsOf(statements).some((a) => a.endsWith("*"))).toBe(false);
  });

  it("grantSend gives a producer sqs:SendMessage on the queue and its URL, nothing more", () => {
    const statements = roleStatements(template, stack, producer);
    expect(statementsWithAction(statements, "sqs:")).toEqual([
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: arnOf(data.callbackQueue) },
    ]);
    const fn = template.toJSON().Resources[logicalIdOfFunction(stack, producer)] as Resource;
    expect(fn.Properties.Environment).toEqual({
      Variables: expect.objectContaining({ SVC_CALLBACK_QUEUE_URL: { Ref: idOf(data.callbackQueue) } }),
    });
    expect(JSON.stringify(fn.Properties.Environment)).not.toContain("SVC_CALLBACK_DLQ_URL");
  });

  it("leaves cdk-nag AwsSolutions and CDK's own annotations without findings", () => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(app);
    const findings = report.violations
      .filter((v) => v.severity === "error" || v.severity === "warning")
      .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(", ")}`);
    expect(findings).toEqual([]);
    expect(Annotations.fromStack(stack).findError("*", Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning("*", Match.anyValue())).toEqual([]);
  });

  it("bundles a handler that loads in Node and exports the consumer", async () => {
    const fn = template.toJSON().Resources[logicalIdOfFunction(stack, consumer.fn)] as Resource;
    const key = String((fn.Properties.Code as { S3Key?: string }).S3Key);
    const file = join(assemblyDir, `asset.${key.replace(/\.zip$/, "")}`, "index.mjs");
    const script = `const m = await import(${JSON.stringify(file)}); console.log(typeof m.handler);`;
    const stdout = await runAsLambda(script);
    expect(stdout.trim()).toBe("function");
    // CDK applies BUNDLE_POLICY.alias: credentials from the environment only, no STS/SSO clients
    // (their class names survive minification: keepNames).
    const code = await readFile(file, "utf8");
    expect(code).not.toMatch(/\bSTSClient\b|\bSSOClient\b/);
    expect(code).toContain("captureLambdaHandler");
  });
});
