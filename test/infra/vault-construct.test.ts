/**
 * TokenizationVault's props, alarms, dashboard and optional hardening, on templates synthesized without bundling
 * (the functions' code is not what these check; stack.test.ts synthesizes the project's app with it).
 */
import { App, type CfnElement, RemovalPolicy, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import type { CfnAlias } from "aws-cdk-lib/aws-kms";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Topic } from "aws-cdk-lib/aws-sns";
import type { IConstruct } from "constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "#lib/app.ts";
import type { ApiFunction } from "#lib/constructs/api-function.ts";
import { DEFAULT_ALARM_THRESHOLDS, SANDBOX_RUNNER_ERRORS } from "#lib/constructs/monitoring.ts";
import { TokenizationVault, type TokenizationVaultProps } from "#lib/tokenization-vault.ts";
import { FUNCTION_GROUPS } from "#shared/http/route.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import { CDK_CONTEXT, type Resource, resourcesOfType } from "./template.ts";

const newApp = () => new App({ context: { ...CDK_CONTEXT, "aws:cdk:bundling-stacks": [] } });
const env = { account: "111111111111", region: "us-east-1" };

let plain: { stack: Stack; vault: TokenizationVault; template: Template };
let hardened: { stack: Stack; vault: TokenizationVault; template: Template };
let topic: Topic;

beforeAll(() => {
  const app = newApp();
  const plainStack = new Stack(app, "Plain", { env });
  const plainVault = new TokenizationVault(plainStack, "Vault", { emailSender: "vault@example.com" });

  const hardenedStack = new Stack(app, "Hardened", { env });
  topic = new Topic(hardenedStack, "OpsTopic");
  const hardenedVault = new TokenizationVault(hardenedStack, "Vault", {
    emailSender: "vault@example.com",
    rootKeyParameterName: "/payments/prod/root-key-hash",
    logRetention: RetentionDays.THREE_MONTHS,
    throttle: { rateLimit: 500, burstLimit: 1000 },
    rateLimit: { perSecond: 50, burst: 200 },
    authCacheSeconds: 0,
    auditLogRetentionDays: 400,
    metricsNamespace: "Payments/Vault",
    alarmTopic: topic,
    alarmThresholds: { api5xxPercent: 5, apiP99LatencyMs: 1500 },
    domain: {
      name: "vault.example.com",
      certificate: Certificate.fromCertificateArn(
        hardenedStack,
        "Cert",
        "arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000000",
      ),
    },
    waf: { rateLimitPer5Min: 1000 },
    backup: { copyToVaultArn: "arn:aws:backup:eu-west-1:111111111111:backup-vault:dr", retentionDays: 90 },
    reservedConcurrency: { tokens: 50, proxy: 20 },
    tableRemovalPolicy: RemovalPolicy.DESTROY,
    customerKeyAccounts: ["222222222222"],
  });
  plain = { stack: plainStack, vault: plainVault, template: Template.fromStack(plainStack) };
  hardened = { stack: hardenedStack, vault: hardenedVault, template: Template.fromStack(hardenedStack) };
}, 300_000);

const idIn = (stack: Stack, construct: IConstruct) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** Every alarm, with the metric names it reads (directly or inside its math expression). */
function alarms(template: Template): { id: string; props: Record<string, unknown>; metrics: string[] }[] {
  return resourcesOfType(template, "AWS::CloudWatch::Alarm").map(([id, alarm]) => {
    const p = alarm.Properties as {
      MetricName?: string;
      Metrics?: { MetricStat?: { Metric: { MetricName: string } } }[];
    };
    const metrics = p.MetricName
      ? [p.MetricName]
      : (p.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
    return { id, props: alarm.Properties, metrics };
  });
}

describe("alarms", () => {
  it("watch the API's 5xx rate and p99 latency, each function's errors and throttles, the table, the DLQs, the runners and the sweep", () => {
    const all = alarms(plain.template);
    const invoked = [
      ...Object.values(plain.vault.http.functions),
      plain.vault.callbacks.fn,
      plain.vault.sweeper.fn,
      plain.vault.rewrap.fn,
    ];
    const byMetric = (name: string) => all.filter((a) => a.metrics.includes(name));

    expect(byMetric("5xx")).toHaveLength(1);
    expect(byMetric("5xx")[0]?.metrics.sort()).toEqual(["5xx", "Count"]);
    expect(byMetric("Latency")[0]?.props).toMatchObject({
      ExtendedStatistic: "p99",
      Threshold: DEFAULT_ALARM_THRESHOLDS.apiP99LatencyMs,
    });
    // One error and one throttle alarm per invoked function, on that function; none for the runner template.
    for (const fn of invoked) {
      const fnId = idIn(plain.stack, fn.function);
      for (const metric of ["Errors", "Throttles"]) {
        const matching = all.filter(
          (a) =>
            a.props.MetricName === metric &&
            JSON.stringify(a.props.Dimensions) ===
              JSON.stringify([{ Name: "FunctionName", Value: { Ref: fnId } }]),
        );
        expect(matching, `${metric} of ${fn.node.path}`).toHaveLength(1);
      }
    }
    expect(byMetric("Errors")).toHaveLength(invoked.length);
    expect(byMetric("ReadThrottleEvents")[0]?.metrics.sort()).toEqual([
      "ReadThrottleEvents",
      "ReadThrottleEvents",
      "WriteThrottleEvents",
      "WriteThrottleEvents",
    ]);
    expect(byMetric("SystemErrors")[0]?.metrics.length).toBeLessThanOrEqual(10);
    // Each dead-letter queue's depth: the callbacks' and the key rewrap pages'.
    const queues = byMetric("ApproximateNumberOfMessagesVisible");
    expect(queues).toHaveLength(2);
    for (const [i, queue] of [
      plain.vault.data.callbackDeadLetterQueue,
      plain.vault.rewrap.deadLetterQueue,
    ].entries())
      expect(queues[i]?.props).toMatchObject({
        Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [idIn(plain.stack, queue), "QueueName"] } }],
        Threshold: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
    expect(byMetric(SANDBOX_RUNNER_ERRORS)[0]?.props).toMatchObject({
      Namespace: plain.vault.metricsNamespace,
      Threshold: 1,
    });
    // Due items the sweep put off (retried ever more rarely), in 2 hours of 3: the service's own EMF metric.
    expect(byMetric("SweepItemsPutOff")[0]?.props).toMatchObject({
      Namespace: plain.vault.metricsNamespace,
      Dimensions: [{ Name: "service", Value: "svc-vault" }],
      Period: 3600,
      Statistic: "Sum",
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    expect(all).toHaveLength(2 + 2 * invoked.length + 2 + 2 + 1 + 1);
    // No topic given: alarms only, no actions, no topic.
    for (const alarm of all) expect(alarm.props.AlarmActions).toBeUndefined();
    plain.template.resourceCountIs("AWS::SNS::Topic", 0);
    for (const alarm of all) expect(alarm.props.TreatMissingData).toBe("notBreaching");
  });

  it("counts the runners' failures from their log group into the vault's namespace", () => {
    plain.template.hasResourceProperties("AWS::Logs::MetricFilter", {
      LogGroupName: { Ref: idIn(plain.stack, plain.vault.http.sandboxRunners.logGroup) },
      FilterPattern: Match.stringLikeRegexp("Task timed out"),
      MetricTransformations: [
        {
          MetricNamespace: plain.vault.metricsNamespace,
          MetricName: SANDBOX_RUNNER_ERRORS,
          MetricValue: "1",
        },
      ],
    });
  });

  it("take their thresholds from props and notify the given topic on alarm and on recovery", () => {
    const all = alarms(hardened.template);
    const topicRef = { Ref: idIn(hardened.stack, topic) };
    for (const alarm of all) {
      expect(alarm.props.AlarmActions).toEqual([topicRef]);
      expect(alarm.props.OKActions).toEqual([topicRef]);
    }
    expect(all.find((a) => a.metrics.includes("5xx"))?.props.Threshold).toBe(5);
    expect(all.find((a) => a.metrics.includes("Latency"))?.props.Threshold).toBe(1500);
  });

  it("with only an e-mail address, create a TLS-only topic subscribed by it", () => {
    const app = newApp();
    const stack = new Stack(app, "Mail", { env });
    new TokenizationVault(stack, "Vault", {
      emailSender: "vault@example.com",
      alarmEmail: "ops@example.com",
    });
    const template = Template.fromStack(stack);
    template.resourceCountIs("AWS::SNS::Topic", 1);
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
        ]),
      },
    });
    const [[topicId]] = resourcesOfType(template, "AWS::SNS::Topic") as [[string, Resource]];
    for (const [, alarm] of resourcesOfType(template, "AWS::CloudWatch::Alarm"))
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });
});

describe("the project's own app", () => {
  it("with context alarmEmail (a topic and its subscription), still passes cdk-nag", () => {
    const app = new App({
      context: { ...CDK_CONTEXT, "aws:cdk:bundling-stacks": [], alarmEmail: "ops@example.com" },
    });
    const stack = buildApp(app);
    expect(() => app.synth()).not.toThrow();
    Template.fromStack(stack).hasResourceProperties("AWS::SNS::Subscription", {
      Endpoint: "ops@example.com",
    });
  });
});

describe("dashboard", () => {
  it("draws the API, Lambda, DynamoDB, the DLQ and the service's own metrics from its namespace", () => {
    const [[, dashboard]] = resourcesOfType(plain.template, "AWS::CloudWatch::Dashboard") as [
      [string, Resource],
    ];
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const title of [
      "API requests and errors",
      "API latency",
      "Lambda errors",
      "Lambda throttles",
      "DynamoDB throttles and errors",
      "Dead-letter queues",
      "Tokens",
      "Proxy destinations",
      "Sandbox",
    ])
      expect(body).toContain(title);
    for (const name of Object.values(METRIC)) expect(body).toContain(`MetricName=\\\\\\"${name}\\\\\\"`);
    expect(body).toContain(`Namespace=\\\\\\"${plain.vault.metricsNamespace}\\\\\\"`);
  });

  it("is left out when asked", () => {
    const app = newApp();
    const stack = new Stack(app, "NoDashboard", { env });
    new TokenizationVault(stack, "Vault", { emailSender: "vault@example.com", dashboard: false });
    Template.fromStack(stack).resourceCountIs("AWS::CloudWatch::Dashboard", 0);
  });
});

describe("settings as props", () => {
  const variables = (template: Template) =>
    resourcesOfType(template, "AWS::Lambda::Function").map(
      ([id, fn]) =>
        [id, (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables] as const,
    );

  it("sets the metrics namespace on every function, and each function's group as its service name", () => {
    expect(plain.vault.metricsNamespace).toBe(`svc-vault/${plain.vault.name}`);
    const all = variables(plain.template);
    // The HTTP groups, the callback consumer, the sweep, the key rewrap worker and the sandbox runner template.
    expect(all.length).toBe(FUNCTION_GROUPS.length + 4);
    for (const [id, vars] of all)
      expect(vars.POWERTOOLS_METRICS_NAMESPACE, id).toBe(plain.vault.metricsNamespace);
    for (const group of FUNCTION_GROUPS) {
      const fnId = idIn(plain.stack, plain.vault.http.functions[group].function);
      expect(all.find(([id]) => id === fnId)?.[1].POWERTOOLS_SERVICE_NAME).toBe(group);
    }
    // Defaults come from shared/config.ts: nothing is set that was not asked for, but each tenant's rate budget,
    // which is half the stage throttle (100 per second, bursts of 200): the service's own default (1000 per
    // second) let one tenant take the whole API (deployment review, 28 Nov 2026).
    for (const [, vars] of all) {
      for (const name of ["SVC_AUTH_CACHE_SECONDS", "SVC_LOG_RETENTION_DAYS"])
        expect(vars).not.toHaveProperty(name);
      expect(vars).toMatchObject({ SVC_RATE_LIMIT_PER_SECOND: "50", SVC_RATE_LIMIT_BURST: "100" });
    }
  });

  it("passes rate limits, the auth cache, audit retention, namespace and root key parameter to every function that needs them", () => {
    for (const [id, vars] of variables(hardened.template))
      expect(vars, id).toMatchObject({
        POWERTOOLS_METRICS_NAMESPACE: "Payments/Vault",
        SVC_RATE_LIMIT_PER_SECOND: "50",
        SVC_RATE_LIMIT_BURST: "200",
        SVC_AUTH_CACHE_SECONDS: "0",
        SVC_LOG_RETENTION_DAYS: "400",
      });
    const tenants = idIn(hardened.stack, hardened.vault.http.functions.tenants.function);
    expect(variables(hardened.template).find(([id]) => id === tenants)?.[1].SVC_ROOT_KEY_PARAMETER).toBe(
      "/payments/prod/root-key-hash",
    );
  });

  it("throttles the stage and keeps logs as asked", () => {
    hardened.template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      DefaultRouteSettings: { ThrottlingBurstLimit: 1000, ThrottlingRateLimit: 500 },
    });
    for (const [, group] of resourcesOfType(hardened.template, "AWS::Logs::LogGroup"))
      expect(group.Properties.RetentionInDays).toBe(90);
  });

  it("refuses at synthesis what the functions would refuse at their first start", () => {
    const attempt = (props: Partial<TokenizationVaultProps>) => () =>
      new TokenizationVault(new Stack(newApp(), "Bad"), "Vault", {
        emailSender: "vault@example.com",
        ...props,
      });
    expect(attempt({ authCacheSeconds: 61 })).toThrow(/SVC_AUTH_CACHE_SECONDS/);
    expect(attempt({ rateLimit: { perSecond: -1 } })).toThrow(/SVC_RATE_LIMIT_PER_SECOND/);
    // A tenant's budget above the stage throttle, which every caller shares: one tenant could take the API.
    expect(attempt({ rateLimit: { perSecond: 101 } })).toThrow(/above the stage throttle/);
    expect(
      attempt({ throttle: { rateLimit: 10, burstLimit: 10 }, rateLimit: { perSecond: 100_000 } }),
    ).toThrow(/above the stage throttle/);
    // The vault's own account as a customer key account: its roles would use every key there (deployment review).
    expect(
      () =>
        new TokenizationVault(
          new Stack(newApp(), "Own", { env: { account: "111111111111", region: "us-east-1" } }),
          "Vault",
          { emailSender: "vault@example.com", customerKeyAccounts: ["111111111111"] },
        ),
    ).toThrow(/vault's own account/);
    expect(attempt({ auditLogRetentionDays: 0 })).toThrow(/SVC_LOG_RETENTION_DAYS/);
    expect(attempt({ rootKeyParameterName: "no spaces allowed" })).toThrow(/rootKeyParameterName/);
    expect(attempt({ emailSender: "nobody" })).toThrow(/emailSender/);
    expect(attempt({ metricsNamespace: "AWS/Lambda" })).toThrow(/metricsNamespace/);
    expect(attempt({ reservedConcurrency: { tokens: 0 } })).toThrow(/reservedConcurrency/);
    expect(attempt({ reservedConcurrency: { token: 5 } as never })).toThrow(/no function group token/);
    expect(attempt({ customerKeyAccounts: ["*"] })).toThrow(/customerKeyAccounts/);
  });
});

describe("names", () => {
  it("derive from the stack and the construct's path: two vaults in one stack and one in another all differ", () => {
    const app = newApp();
    const one = new Stack(app, "One", { env });
    const two = new Stack(app, "Two", { env });
    const vaults = [
      new TokenizationVault(one, "A", { emailSender: "vault@example.com" }),
      new TokenizationVault(one, "B", { emailSender: "vault@example.com" }),
      new TokenizationVault(two, "A", { emailSender: "vault@example.com" }),
    ];
    const names = (pick: (v: TokenizationVault) => string) => new Set(vaults.map(pick)).size;
    expect(names((v) => v.name)).toBe(3);
    expect(names((v) => v.rootKeyParameterName)).toBe(3);
    expect(names((v) => v.metricsNamespace)).toBe(3);
    expect(names((v) => v.http.sandboxRunners.prefix)).toBe(3);
    // Only the names: two vaults (about 275 resources each) do not fit one stack's 500 (docs/operations.md).
    const aliases = vaults.map(
      (v) => (v.data.dataKey.node.findChild("Alias").node.defaultChild as CfnAlias).aliasName,
    );
    expect(new Set(aliases).size).toBe(3);
    expect(vaults[0]?.rootKeyParameterName).toMatch(/^\/One-A-[0-9a-f]{6}\/root-key-hash$/);
  });
});

describe("hardening", () => {
  it("serves the API on a custom domain mapped to the stage, and points invitation links there", () => {
    hardened.template.hasResourceProperties("AWS::ApiGatewayV2::DomainName", {
      DomainName: "vault.example.com",
      DomainNameConfigurations: [Match.objectLike({ EndpointType: "REGIONAL" })],
    });
    hardened.template.hasResourceProperties("AWS::ApiGatewayV2::ApiMapping", {
      ApiId: { Ref: idIn(hardened.stack, hardened.vault.http.api) },
      Stage: "$default",
    });
    const members = idIn(hardened.stack, hardened.vault.http.functions.members.function);
    const vars = (hardened.template.toJSON().Resources[members] as Resource).Properties.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(vars.Variables.SVC_INVITATION_URL).toBe("https://vault.example.com/invitations/accept");
  });

  it("puts WAF (managed common and bad-input rules, a rate rule) on a CloudFront distribution in front of the HTTP API", () => {
    const [[aclId, acl]] = resourcesOfType(hardened.template, "AWS::WAFv2::WebACL") as [[string, Resource]];
    expect(acl.Properties).toMatchObject({ Scope: "CLOUDFRONT", DefaultAction: { Allow: {} } });
    // Sampled requests would keep callers' headers, SVC-API-KEY among them, in the WAF console.
    expect(JSON.stringify(acl.Properties)).not.toContain('"SampledRequestsEnabled":true');
    expect(JSON.stringify(acl.Properties)).toContain('"SampledRequestsEnabled":false');
    const rules = acl.Properties.Rules as {
      Name: string;
      Statement: Record<string, unknown>;
      Action?: unknown;
    }[];
    expect(rules.find((r) => r.Name === "RateLimitPerAddress")?.Statement).toEqual({
      RateBasedStatement: { Limit: 1000, AggregateKeyType: "IP" },
    });
    expect(rules.map((r) => r.Name)).toEqual(
      expect.arrayContaining(["AWSManagedRulesCommonRuleSet", "AWSManagedRulesKnownBadInputsRuleSet"]),
    );
    hardened.template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        WebACLId: { "Fn::GetAtt": [aclId, "Arn"] },
        DefaultCacheBehavior: Match.objectLike({ ViewerProtocolPolicy: "https-only" }),
      }),
    });
    // No association with the API: HTTP APIs cannot have one.
    hardened.template.resourceCountIs("AWS::WAFv2::WebACLAssociation", 0);
  });

  it("refuses to create the CloudFront web ACL outside us-east-1, and takes an existing one there", () => {
    const app = newApp();
    const stack = new Stack(app, "Ireland", { env: { ...env, region: "eu-west-1" } });
    expect(
      () => new TokenizationVault(stack, "Vault", { emailSender: "vault@example.com", waf: {} }),
    ).toThrow(/us-east-1/);
    const other = new Stack(app, "Ireland2", { env: { ...env, region: "eu-west-1" } });
    const arn = "arn:aws:wafv2:us-east-1:111111111111:global/webacl/shared/abc";
    new TokenizationVault(other, "Vault", { emailSender: "vault@example.com", waf: { webAclArn: arn } });
    const template = Template.fromStack(other);
    template.resourceCountIs("AWS::WAFv2::WebACL", 0);
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({ WebACLId: arn }),
    });
  });

  it("backs the table up daily and copies each backup to the other region's vault", () => {
    hardened.template.hasResourceProperties("AWS::Backup::BackupPlan", {
      BackupPlan: {
        BackupPlanRule: [
          Match.objectLike({
            Lifecycle: { DeleteAfterDays: 90 },
            CopyActions: [
              {
                DestinationBackupVaultArn: "arn:aws:backup:eu-west-1:111111111111:backup-vault:dr",
                Lifecycle: { DeleteAfterDays: 90 },
              },
            ],
          }),
        ],
      },
    });
    hardened.template.hasResourceProperties("AWS::Backup::BackupSelection", {
      BackupSelection: Match.objectLike({
        Resources: [{ "Fn::GetAtt": [idIn(hardened.stack, hardened.vault.data.table), "Arn"] }],
      }),
    });
    hardened.template.hasResourceProperties("AWS::Backup::BackupVault", {
      BackupVaultName: `${hardened.vault.name}-backups`,
    });
    plain.template.resourceCountIs("AWS::Backup::BackupPlan", 0);
  });

  it("reserves concurrency for the groups asked, and no other", () => {
    for (const group of FUNCTION_GROUPS) {
      const id = idIn(hardened.stack, hardened.vault.http.functions[group].function);
      const reserved = (hardened.template.toJSON().Resources[id] as Resource).Properties
        .ReservedConcurrentExecutions;
      expect(reserved, group).toBe(group === "tokens" ? 50 : group === "proxy" ? 20 : undefined);
    }
  });

  it("retains the table by default; DESTROY deletes it and turns deletion protection off", () => {
    plain.template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
    });
    hardened.template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Delete",
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
    // The key stays whatever the table does: backups and copies cannot be opened without it.
    hardened.template.hasResource("AWS::KMS::Key", { DeletionPolicy: "Retain" });
  });
});

describe("key custody", () => {
  type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
  const statementsOf = (t: { stack: Stack; template: Template }, role: IConstruct) =>
    resourcesOfType(t.template, "AWS::IAM::Policy")
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${idIn(t.stack, role)}"`))
      .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const customerKeyStatements = (t: { stack: Stack; template: Template }, role: IConstruct) =>
    statementsOf(t, role).filter((s) => JSON.stringify(s.Resource).includes(":kms:*:"));

  it("signs deletion receipts with a retained P-256 key, from the tenants function only; the system function reads its public key", () => {
    plain.template.hasResource("AWS::KMS::Key", {
      Properties: { KeySpec: "ECC_NIST_P256", KeyUsage: "SIGN_VERIFY" },
      DeletionPolicy: "Retain",
    });
    const receiptKeyArn = { "Fn::GetAtt": [idIn(plain.stack, plain.vault.data.receiptKey), "Arn"] };
    const actionsOnReceiptKey = (role: IConstruct) =>
      statementsOf(plain, role)
        .filter((s) => JSON.stringify(s.Resource) === JSON.stringify(receiptKeyArn))
        .flatMap((s) => [s.Action].flat())
        .sort();
    const fns = plain.vault.http.functions;
    expect(actionsOnReceiptKey(fns.tenants.role)).toEqual(["kms:GetPublicKey", "kms:Sign"]);
    expect(actionsOnReceiptKey(fns.system.role)).toEqual(["kms:GetPublicKey"]);
    for (const group of FUNCTION_GROUPS.filter((g) => g !== "tenants" && g !== "system"))
      expect(actionsOnReceiptKey(fns[group].role), group).toEqual([]);
    const env = (fn: IConstruct) =>
      (plain.template.toJSON().Resources[idIn(plain.stack, fn)] as Resource).Properties.Environment as {
        Variables: Record<string, unknown>;
      };
    expect(env(fns.tenants.function).Variables.SVC_RECEIPT_KEY_ID).toEqual(receiptKeyArn);
    expect(env(fns.tokens.function).Variables.SVC_RECEIPT_KEY_ID).toBeUndefined();
  });

  it("lets tenants bring keys only from the accounts named, only under a tenant_id context, and by default from none", () => {
    for (const fn of plain.vault.functions) expect(customerKeyStatements(plain, fn.role)).toEqual([]);
    const handlesTenantKeys = (fn: ApiFunction) => fn.dataKeyUse === "data" || fn.dataKeyUse === "answers";
    const withKeys = hardened.vault.functions.filter(handlesTenantKeys);
    expect(withKeys.length).toBeGreaterThan(3);
    const tenantContext = { Null: { "kms:EncryptionContext:tenant_id": "false" } };
    for (const fn of withKeys) {
      const statements = customerKeyStatements(hardened, fn.role);
      const tenants = fn === hardened.vault.http.functions.tenants;
      // Only the tenants function (PUT /tenants/self/keys/kms) re-encrypts a tenant's data keys to its key.
      expect(statements.length, fn.node.path).toBe(tenants ? 2 : 1);
      for (const statement of statements)
        expect(JSON.stringify(statement.Resource)).toContain(":kms:*:222222222222:key/*");
      const [use, rewrap] = statements;
      expect([use?.Action].flat().sort()).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]);
      // The functions that never open token data: the answer keys only (and the tenants function the key's
      // trial key), as on the deployment's key.
      expect(use?.Condition, fn.node.path).toEqual(
        fn.dataKeyUse === "answers"
          ? {
              ...tenantContext,
              StringLike: {
                "kms:EncryptionContext:key_id": ["answers-*", ...(tenants ? ["byok-check"] : [])],
              },
            }
          : tenantContext,
      );
      if (tenants) {
        expect([rewrap?.Action].flat().sort()).toEqual(["kms:ReEncryptFrom", "kms:ReEncryptTo"]);
        expect(rewrap?.Condition).toEqual(tenantContext);
      }
    }
    for (const fn of hardened.vault.functions.filter((f) => !handlesTenantKeys(f)))
      expect(customerKeyStatements(hardened, fn.role)).toEqual([]);
  });
});
