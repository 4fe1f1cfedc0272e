import { type RemovalPolicy, Stack, Token } from "aws-cdk-lib";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { type ITopic, Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Construct } from "constructs";
import { routeList } from "#shared/api/index.ts";
import { loadConfig } from "#shared/config.ts";
import { FUNCTION_GROUPS, type FunctionGroup } from "#shared/http/route.ts";
import { ApiFunction } from "./constructs/api-function.ts";
import { VaultBackup, type VaultBackupOptions } from "./constructs/backup.ts";
import { CallbackConsumer } from "./constructs/callback-consumer.ts";
import { EdgeFirewall, type EdgeFirewallOptions } from "./constructs/edge-firewall.ts";
import { DEFAULT_THROTTLE, type VaultDomain, VaultHttpApi } from "./constructs/http-api.ts";
import { type AlarmThresholds, VaultMonitoring } from "./constructs/monitoring.ts";
import { RewrapWorker } from "./constructs/rewrap-worker.ts";
import { Sweeper } from "./constructs/sweeper.ts";
import { VaultData } from "./constructs/vault-data.ts";
import { deploymentName } from "./naming.ts";

/** SSM parameter names: letters, digits, _ . - and / as separator, at most 1011 characters. */
const PARAMETER_NAME = /^\/?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export interface TokenizationVaultProps {
  /** Verified SES identity (address, or an address of a verified domain) that sends invitation e-mails. */
  readonly emailSender: string;
  /** Where invitation links point (your front end); default the API's own accept page. */
  readonly invitationUrl?: string;
  /**
   * SSM SecureString holding the root key's SHA-256 (hex), created by you (docs/operations.md, "Root key in
   * AWS"). Default `/<name>/root-key-hash`, the name derived from the construct's path, so two vaults in one
   * account never share a root key.
   */
  readonly rootKeyParameterName?: string;
  /** CloudWatch retention of function, runner and access logs (default one month). */
  readonly logRetention?: RetentionDays;
  /** API Gateway's stage throttle for the whole API (default 100 requests per second, bursts of 200). */
  readonly throttle?: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * The service's own rate limit per tenant (per source address on routes without a key): requests per
   * second (0 turns it off) and burst (default 10 s of the rate). Default half the stage throttle (rate and
   * burst); more than the stage throttle is refused.
   */
  readonly rateLimit?: { readonly perSecond: number; readonly burst?: number };
  /** How long a warm function may keep a resolved API or proxy key: the longest revocation delay (0–60, default 5). */
  readonly authCacheSeconds?: number;
  /** Audit log retention in days, through DynamoDB TTL (1–3650, default 365). */
  readonly auditLogRetentionDays?: number;
  /** CloudWatch namespace of the service's own metrics (default `svc-vault/<name>`). */
  readonly metricsNamespace?: string;
  /** Where alarms notify (alarm and OK). */
  readonly alarmTopic?: ITopic;
  /** Without `alarmTopic`: a topic is created with this address subscribed (it must confirm). */
  readonly alarmEmail?: string;
  /** Alarm thresholds; defaults in lib/constructs/monitoring.ts (DEFAULT_ALARM_THRESHOLDS). */
  readonly alarmThresholds?: Partial<AlarmThresholds>;
  /** Create the CloudWatch dashboard (default true). */
  readonly dashboard?: boolean;
  /** Serve the API on a custom domain: its name and an ACM certificate in the stack's region. */
  readonly domain?: VaultDomain;
  /** AWS WAF (managed rules + a rate-based rule) on a CloudFront distribution in front of the API. */
  readonly waf?: EdgeFirewallOptions;
  /** A daily AWS Backup of the table, optionally copied to a vault in another region. */
  readonly backup?: VaultBackupOptions;
  /** Reserved concurrency per function group (e.g. `{ tokens: 100 }`): a floor for them and a ceiling. */
  readonly reservedConcurrency?: Partial<Record<FunctionGroup, number>>;
  /**
   * Bring your own key: the AWS accounts whose KMS keys tenants may bring (PUT /tenants/self/keys/kms). The
   * functions that handle tenant data keys may then use keys there, only under a tenant_id encryption context;
   * the customer's key policy or grant pins its key to its tenant (docs/security.md, "Bring your own key").
   * Default none: a tenant's key is refused (400) by the test it must pass first.
   */
  readonly customerKeyAccounts?: readonly string[];
  /** The table's removal policy (default RETAIN; deletion protection stays on unless DESTROY). */
  readonly tableRemovalPolicy?: RemovalPolicy;
}

/**
 * The whole service as one construct, for any CDK app: VaultData (table, key, queues), VaultHttpApi (functions,
 * routes), the callback consumer, the expiry sweep, alarms and a dashboard, and the optional hardening.
 * Every name that must be unique per account and region (key alias, API, root key parameter, metrics namespace,
 * runner prefix, backup vault) derives from the construct's path, so two vaults deploy side by side.
 * It applies no cdk-nag checks: the project's own app does (lib/app.ts).
 */
export class TokenizationVault extends Construct {
  /** Unique per account and region; names below derive from it. */
  readonly name: string;
  readonly data: VaultData;
  readonly http: VaultHttpApi;
  readonly callbacks: CallbackConsumer;
  readonly sweeper: Sweeper;
  /** Key rewrap jobs' queue and worker (docs/security.md, key custody). */
  readonly rewrap: RewrapWorker;
  readonly monitoring: VaultMonitoring;
  readonly rootKeyParameterName: string;
  readonly metricsNamespace: string;
  readonly alarmTopic?: ITopic;
  readonly firewall?: EdgeFirewall;
  readonly backup?: VaultBackup;
  /** Every function of the vault (the runner template included). */
  readonly functions: readonly ApiFunction[];

  constructor(scope: Construct, id: string, props: TokenizationVaultProps) {
    super(scope, id);
    this.name = deploymentName(this);
    this.rootKeyParameterName = props.rootKeyParameterName ?? `/${this.name}/root-key-hash`;
    this.metricsNamespace = props.metricsNamespace ?? `svc-vault/${this.name}`;
    checkProps(props, this.rootKeyParameterName, this.metricsNamespace, Stack.of(this).account);

    this.data = new VaultData(this, "Data", {
      keyAlias: `alias/${this.name}-data`,
      ...(props.tableRemovalPolicy ? { tableRemovalPolicy: props.tableRemovalPolicy } : {}),
    });
    this.http = new VaultHttpApi(this, "Http", {
      apiName: this.name,
      routes: routeList,
      table: this.data.table,
      dataKey: this.data.dataKey,
      receiptKey: this.data.receiptKey,
      emailSender: props.emailSender,
      invitationUrl: props.invitationUrl,
      rootKeyParameterName: this.rootKeyParameterName,
      logRetention: props.logRetention,
      ...(props.throttle ? { throttle: props.throttle } : {}),
      ...(props.domain ? { domain: props.domain } : {}),
    });
    this.callbacks = new CallbackConsumer(this, "Callbacks", {
      queue: this.data.callbackQueue,
      deadLetterQueue: this.data.callbackDeadLetterQueue,
      table: this.data.table,
      dataKey: this.data.dataKey,
      logRetention: props.logRetention,
      sandbox: { runners: this.http.sandboxRunners, apiUrl: this.http.api.apiEndpoint },
    });
    this.callbacks.grantSend(this.http.functions.reactors);
    this.sweeper = new Sweeper(this, "Sweeper", { table: this.data.table, logRetention: props.logRetention });
    this.rewrap = new RewrapWorker(this, "Rewrap", { ...this.data, logRetention: props.logRetention });
    this.rewrap.grantSend(this.http.functions.tenants);

    this.functions = this.node.findAll().filter((c): c is ApiFunction => c instanceof ApiFunction);
    const customerKeyAccounts = props.customerKeyAccounts ?? [];
    if (customerKeyAccounts.length > 0)
      for (const fn of this.functions.filter((f) => f.dataKeyUse === "data" || f.dataKeyUse === "answers"))
        fn.grantCustomerKeys(
          customerKeyAccounts,
          fn === this.http.functions.tenants ? this.data.dataKey : undefined,
        );
    // Every function: the metrics' namespace, and the service settings given as props (unset: config defaults).
    const environment = { POWERTOOLS_METRICS_NAMESPACE: this.metricsNamespace, ...serviceEnvironment(props) };
    for (const fn of this.functions)
      for (const [name, value] of Object.entries(environment)) fn.function.addEnvironment(name, value);
    for (const [group, count] of Object.entries(props.reservedConcurrency ?? {}) as [FunctionGroup, number][])
      (this.http.functions[group].function.node.defaultChild as CfnFunction).reservedConcurrentExecutions =
        count;

    this.alarmTopic =
      props.alarmTopic ?? (props.alarmEmail ? this.createAlarmTopic(props.alarmEmail) : undefined);
    this.monitoring = new VaultMonitoring(this, "Monitoring", {
      api: this.http.api,
      functions: [...Object.values(this.http.functions), this.callbacks.fn, this.sweeper.fn, this.rewrap.fn],
      table: this.data.table,
      deadLetterQueue: this.data.callbackDeadLetterQueue,
      rewrapDeadLetterQueue: this.rewrap.deadLetterQueue,
      runnerLogGroup: this.http.sandboxRunners.logGroup,
      namespace: this.metricsNamespace,
      ...(this.alarmTopic ? { topic: this.alarmTopic } : {}),
      ...(props.alarmThresholds ? { thresholds: props.alarmThresholds } : {}),
      ...(props.dashboard === false ? { dashboard: false } : {}),
    });

    if (props.waf)
      this.firewall = new EdgeFirewall(this, "Firewall", {
        ...props.waf,
        api: this.http.api,
        name: this.name,
      });
    if (props.backup)
      this.backup = new VaultBackup(this, "Backup", {
        ...props.backup,
        table: this.data.table,
        vaultName: `${this.name}-backups`,
      });
  }

  /** Base URL callers should use (ends with a slash): the WAF's distribution, else the custom domain, else the stage's. */
  get url(): string {
    if (this.firewall) return `https://${this.firewall.distribution.distributionDomainName}/`;
    if (this.http.domainName) return `https://${this.http.domainName.name}/`;
    return this.http.url;
  }

  private createAlarmTopic(email: string): Topic {
    const topic = new Topic(this, "AlarmTopic", {
      displayName: `svc-vault alarms ${this.name}`,
      enforceSSL: true,
    });
    topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}

/**
 * Each tenant's budget: the props', else half the stage throttle. API Gateway's throttle is one ceiling for every
 * caller of a route, counted before any function runs; under the service's own default (1000 per second against
 * the stage's 100) one tenant's keys could take the whole API and have every other tenant answered 429
 * (deployment review, 28 Nov 2026). Half of it leaves the other half to the others.
 */
function tenantRateLimit(props: TokenizationVaultProps): { perSecond: number; burst?: number } {
  if (props.rateLimit) return props.rateLimit;
  const stage = props.throttle ?? DEFAULT_THROTTLE;
  return { perSecond: stage.rateLimit / 2, burst: Math.max(2, Math.floor(stage.burstLimit / 2)) };
}

/** The service settings given as props, as the functions' variables (shared/config.ts reads them). */
function serviceEnvironment(props: TokenizationVaultProps): Record<string, string> {
  const env: Record<string, string> = {};
  const rate = tenantRateLimit(props);
  env.SVC_RATE_LIMIT_PER_SECOND = String(rate.perSecond);
  if (rate.burst !== undefined) env.SVC_RATE_LIMIT_BURST = String(rate.burst);
  if (props.authCacheSeconds !== undefined) env.SVC_AUTH_CACHE_SECONDS = String(props.authCacheSeconds);
  if (props.auditLogRetentionDays !== undefined)
    env.SVC_LOG_RETENTION_DAYS = String(props.auditLogRetentionDays);
  return env;
}

/** Fails synthesis on a prop the functions would refuse at their first cold start, or AWS at deploy. */
function checkProps(
  props: TokenizationVaultProps,
  parameterName: string,
  namespace: string,
  account: string,
): void {
  if (!PARAMETER_NAME.test(parameterName) || parameterName.length > 1011)
    throw new Error(`rootKeyParameterName is not a valid SSM parameter name: ${parameterName}`);
  if (!Token.isUnresolved(props.emailSender) && !EMAIL.test(props.emailSender))
    throw new Error(`emailSender must be an e-mail address: ${props.emailSender}`);
  if (props.alarmEmail !== undefined && !EMAIL.test(props.alarmEmail))
    throw new Error(`alarmEmail must be an e-mail address: ${props.alarmEmail}`);
  if (!/^[A-Za-z0-9.\-_/#: ]{1,255}$/.test(namespace) || /^AWS\//i.test(namespace))
    throw new Error(`metricsNamespace is not a valid CloudWatch namespace: ${namespace}`);
  // The functions' own rules (shared/config.ts), checked here rather than at their first cold start.
  loadConfig({ SVC_MODE: "local", ...serviceEnvironment(props) });
  const stage = props.throttle ?? DEFAULT_THROTTLE;
  if (props.rateLimit && props.rateLimit.perSecond > stage.rateLimit)
    throw new Error(
      `rateLimit.perSecond (${props.rateLimit.perSecond}) is above the stage throttle (${stage.rateLimit} per second, for every caller): one tenant could take the whole API; lower it, or raise throttle.rateLimit`,
    );
  for (const [group, count] of Object.entries(props.reservedConcurrency ?? {})) {
    if (!(FUNCTION_GROUPS as readonly string[]).includes(group))
      throw new Error(`reservedConcurrency: no function group ${group} (${FUNCTION_GROUPS.join(", ")})`);
    if (!Number.isInteger(count) || count < 1)
      throw new Error(`reservedConcurrency.${group} must be a whole number of at least 1: ${count}`);
  }
  // A wildcard would let every account's keys in: only named accounts.
  for (const customer of props.customerKeyAccounts ?? []) {
    if (!/^\d{12}$/.test(customer))
      throw new Error(`customerKeyAccounts: an AWS account id is 12 digits: ${customer}`);
    // Naming the vault's own account would let its data roles use every key there whose policy delegates to IAM
    // (other applications' keys), for any tenant: a same-account customer key needs no identity statement, its
    // own key policy naming the vault's roles suffices.
    if (!Token.isUnresolved(account) && customer === account)
      throw new Error(
        `customerKeyAccounts: ${customer} is the vault's own account; a key there needs only its key policy to name the vault's roles (docs/security.md, "Bring your own key")`,
      );
  }
}
