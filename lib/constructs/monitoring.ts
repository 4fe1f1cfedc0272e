import { Duration } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Operation, type Table } from "aws-cdk-lib/aws-dynamodb";
import { FilterPattern, type ILogGroup, MetricFilter } from "aws-cdk-lib/aws-logs";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { TABLE_KEYS } from "#shared/adapters/dynamodb/schema.ts";
import { METRIC, METRIC_SERVICE } from "#shared/observability/metric-names.ts";
import type { ApiFunction } from "./api-function.ts";

/** When an alarm fires. Each is checked per 5-minute period. */
export interface AlarmThresholds {
  /** 5xx answers as a percentage of the API's requests, in 2 of 3 periods (default 1). */
  readonly api5xxPercent: number;
  /** p99 of API Gateway's latency in milliseconds, 3 periods in a row (default 3000; proxies wait on destinations). */
  readonly apiP99LatencyMs: number;
  /** Failed invocations (crashes, timeouts) of one function in a period (default 1). */
  readonly lambdaErrors: number;
  /** Throttled invocations of one function in a period (default 1). */
  readonly lambdaThrottles: number;
  /** Throttle events of the table and its index in a period (default 1). */
  readonly dynamoThrottles: number;
  /** DynamoDB system errors (500s) on the operations the service uses, in a period (default 1). */
  readonly dynamoSystemErrors: number;
  /** Messages in the callback dead-letter queue (default 1: any message is a lost callback). */
  readonly deadLetterMessages: number;
  /** Failed runs of the tenants' runner functions (crash, timeout) in a period (default 1). */
  readonly sandboxRunnerErrors: number;
  /**
   * Due items (expiries, cvc removals, unfinished transactions) the sweep put off, per hour, in 2 hours of 3
   * (default 1): an item that keeps failing is retried ever more rarely and would otherwise go unnoticed.
   */
  readonly sweepItemsPutOff: number;
}

export const DEFAULT_ALARM_THRESHOLDS: AlarmThresholds = {
  api5xxPercent: 1,
  apiP99LatencyMs: 3000,
  lambdaErrors: 1,
  lambdaThrottles: 1,
  dynamoThrottles: 1,
  dynamoSystemErrors: 1,
  deadLetterMessages: 1,
  sandboxRunnerErrors: 1,
  sweepItemsPutOff: 1,
};

/** Counted from the runners' shared log group (their functions are not in the template, so no AWS/Lambda alarm). */
export const SANDBOX_RUNNER_ERRORS = "SandboxRunnerErrors";

/**
 * What Lambda's runtime writes when an invocation fails: an unhandled error, a timeout, a crash or an OOM.
 * The runners log nothing else (tenant code's output is kept in the child process's buffer, never logged),
 * so tenant code cannot raise this count by printing these words.
 */
const RUNNER_FAILURE_TERMS = [
  "Invoke Error",
  "Task timed out",
  "Runtime exited",
  "Runtime.ExitError",
  "Uncaught Exception",
  "Unhandled Promise Rejection",
];

/** The table operations the service calls (DynamoDB publishes SystemErrors per operation; alarms take ≤ 10 metrics). */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

const PERIOD = Duration.minutes(5);

export interface VaultMonitoringProps {
  api: HttpApi;
  /** The functions that are invoked (not the runner template): one error and one throttle alarm each. */
  functions: readonly ApiFunction[];
  table: Table;
  deadLetterQueue: IQueue;
  /** The key rewrap worker's dead-letter queue (pages that failed every receive): its own depth alarm. */
  rewrapDeadLetterQueue?: IQueue;
  /** The tenants' runner functions' one log group. */
  runnerLogGroup: ILogGroup;
  /** The service's own metrics (EMF), and the runner errors counted here. */
  namespace: string;
  /** Where alarms notify (alarm and back to OK); none: alarms only show in the console. */
  topic?: ITopic;
  thresholds?: Partial<AlarmThresholds>;
  /** Create the dashboard (default true). */
  dashboard?: boolean;
}

/**
 * The vault's alarms and dashboard. Names are left to CloudFormation (unique per stack), so two vaults in one
 * account never collide; each alarm's description says what it watches.
 */
export class VaultMonitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard?: Dashboard;
  readonly thresholds: AlarmThresholds;
  private readonly namespace: string;

  constructor(scope: Construct, id: string, props: VaultMonitoringProps) {
    super(scope, id);
    this.namespace = props.namespace;
    const t = { ...DEFAULT_ALARM_THRESHOLDS, ...props.thresholds };
    this.thresholds = t;
    const { api, table, deadLetterQueue } = props;

    const api5xxRate = new MathExpression({
      expression: "IF(requests > 0, 100 * errors / requests, 0)",
      usingMetrics: {
        errors: api.metricServerError({ period: PERIOD, statistic: "Sum" }),
        requests: api.metricCount({ period: PERIOD, statistic: "Sum" }),
      },
      label: "API 5xx (% of requests)",
      period: PERIOD,
    });
    this.alarm("Api5xxRate", api5xxRate, t.api5xxPercent, "API 5xx answers, % of requests", 3, 2);
    this.alarm(
      "ApiLatencyP99",
      api.metricLatency({ period: PERIOD, statistic: "p99" }),
      t.apiP99LatencyMs,
      "API p99 latency (ms)",
      3,
      3,
    );

    for (const fn of props.functions) {
      const name = fn.node.path.split("/").slice(-2).join("/");
      this.alarm(
        `${fn.node.id}Errors`,
        fn.function.metricErrors({ period: PERIOD, statistic: "Sum" }),
        t.lambdaErrors,
        `Lambda errors of ${name}`,
        1,
        1,
      );
      this.alarm(
        `${fn.node.id}Throttles`,
        fn.function.metricThrottles({ period: PERIOD, statistic: "Sum" }),
        t.lambdaThrottles,
        `Lambda throttles of ${name}`,
        1,
        1,
      );
    }

    const throttles = this.tableThrottles(table);
    this.alarm(
      "TableThrottles",
      throttles,
      t.dynamoThrottles,
      "DynamoDB throttle events (table and GSI1)",
      1,
      1,
    );
    const systemErrors = table.metricSystemErrorsForOperations({
      operations: TABLE_OPERATIONS,
      period: PERIOD,
    });
    this.alarm("TableSystemErrors", systemErrors, t.dynamoSystemErrors, "DynamoDB system errors", 1, 1);

    const deadLetters = deadLetterQueue.metricApproximateNumberOfMessagesVisible({
      period: PERIOD,
      statistic: "Maximum",
    });
    this.alarm(
      "CallbackDeadLetters",
      deadLetters,
      t.deadLetterMessages,
      "Callback dead-letter queue depth",
      1,
      1,
    );

    if (props.rewrapDeadLetterQueue)
      this.alarm(
        "RewrapDeadLetters",
        props.rewrapDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: PERIOD,
          statistic: "Maximum",
        }),
        t.deadLetterMessages,
        "Key rewrap dead-letter queue depth (a job stopped: start a new rewrap)",
        1,
        1,
      );

    new MetricFilter(this, "SandboxRunnerErrorsFilter", {
      logGroup: props.runnerLogGroup,
      filterPattern: FilterPattern.anyTerm(...RUNNER_FAILURE_TERMS),
      metricNamespace: props.namespace,
      metricName: SANDBOX_RUNNER_ERRORS,
      metricValue: "1",
    });
    const runnerErrors = new Metric({
      namespace: props.namespace,
      metricName: SANDBOX_RUNNER_ERRORS,
      period: PERIOD,
      statistic: "Sum",
    });
    this.alarm("SandboxRunnerErrors", runnerErrors, t.sandboxRunnerErrors, "Sandbox runner failures", 1, 1);

    // Hourly: the sweep runs every 15 minutes, and one transient failure is retried within the hour.
    const putOff = new Metric({
      namespace: props.namespace,
      metricName: METRIC.sweepItemsPutOff,
      dimensionsMap: { service: METRIC_SERVICE },
      period: Duration.hours(1),
      statistic: "Sum",
    });
    this.alarm(
      "SweepItemsPutOff",
      putOff,
      t.sweepItemsPutOff,
      "Due items the expiry sweep could not process and put off (per hour; its logs name their error kinds)",
      3,
      2,
    );

    if (props.topic) {
      const action = new SnsAction(props.topic);
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }

    if (props.dashboard !== false)
      this.dashboard = this.buildDashboard(props, { api5xxRate, throttles, systemErrors, runnerErrors });
  }

  private alarm(
    id: string,
    metric: IMetric,
    threshold: number,
    what: string,
    evaluationPeriods: number,
    datapointsToAlarm: number,
  ): void {
    const alarm = new Alarm(this, id, {
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods,
      datapointsToAlarm,
      // No traffic is no failure (a quiet API has no 5xx rate, a quiet function no errors).
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `svc-vault ${this.node.path}: ${what} ≥ ${threshold}`,
    });
    this.alarms.push(alarm);
  }

  private tableThrottles(table: Table): IMetric {
    const event = (metricName: string, index?: string) =>
      new Metric({
        namespace: "AWS/DynamoDB",
        metricName,
        dimensionsMap: {
          TableName: table.tableName,
          ...(index ? { GlobalSecondaryIndexName: index } : {}),
        },
        period: PERIOD,
        statistic: "Sum",
      });
    return new MathExpression({
      expression: "FILL(r, 0) + FILL(w, 0) + FILL(ir, 0) + FILL(iw, 0)",
      usingMetrics: {
        r: event("ReadThrottleEvents"),
        w: event("WriteThrottleEvents"),
        ir: event("ReadThrottleEvents", TABLE_KEYS.gsi1Name),
        iw: event("WriteThrottleEvents", TABLE_KEYS.gsi1Name),
      },
      label: "Throttle events",
      period: PERIOD,
    });
  }

  /** Every metric of this vault's namespace with that name, summed over its dimensions (routes, groups). */
  private own(metricName: string, statistic: "Sum" | "p99" = "Sum", label = metricName): IMetric {
    const search = `SEARCH('Namespace="${this.namespace}" MetricName="${metricName}"', '${statistic === "Sum" ? "Sum" : "p99"}', ${PERIOD.toSeconds()})`;
    return new MathExpression({
      expression: statistic === "Sum" ? `SUM(${search})` : search,
      usingMetrics: {},
      label,
      period: PERIOD,
    });
  }

  private buildDashboard(
    props: VaultMonitoringProps,
    shared: { api5xxRate: IMetric; throttles: IMetric; systemErrors: IMetric; runnerErrors: IMetric },
  ): Dashboard {
    const { api, table, deadLetterQueue } = props;
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 8, height: 6 });
    const perFunction = (metric: (fn: ApiFunction) => IMetric) => props.functions.map(metric);
    const label = (fn: ApiFunction) => fn.node.id.replace(/Function$/, "");
    const dashboard = new Dashboard(this, "Dashboard", { defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(
      new TextWidget({
        markdown: `## svc-vault \`${this.node.path}\`\nService metrics: namespace \`${this.namespace}\`.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      graph(
        "API requests and errors",
        [
          api.metricCount({ period: PERIOD, statistic: "Sum", label: "Requests" }),
          api.metricClientError({ period: PERIOD, statistic: "Sum", label: "4xx" }),
          api.metricServerError({ period: PERIOD, statistic: "Sum", label: "5xx" }),
        ],
        [shared.api5xxRate],
      ),
      graph("API latency (ms)", [
        api.metricLatency({ period: PERIOD, statistic: "p50", label: "p50" }),
        api.metricLatency({ period: PERIOD, statistic: "p99", label: "p99" }),
        api.metricIntegrationLatency({ period: PERIOD, statistic: "p99", label: "integration p99" }),
      ]),
      graph("Dead-letter queues", [
        deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: "Callbacks" }),
        ...(props.rewrapDeadLetterQueue
          ? [
              props.rewrapDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
                period: PERIOD,
                label: "Rewrap pages",
              }),
            ]
          : []),
        deadLetterQueue.metricApproximateAgeOfOldestMessage({
          period: PERIOD,
          label: "Callbacks oldest (s)",
        }),
      ]),
    );
    dashboard.addWidgets(
      graph(
        "Lambda errors",
        perFunction((fn) => fn.function.metricErrors({ period: PERIOD, statistic: "Sum", label: label(fn) })),
      ),
      graph(
        "Lambda throttles",
        perFunction((fn) =>
          fn.function.metricThrottles({ period: PERIOD, statistic: "Sum", label: label(fn) }),
        ),
      ),
      graph(
        "Lambda duration p99 (ms)",
        perFunction((fn) =>
          fn.function.metricDuration({ period: PERIOD, statistic: "p99", label: label(fn) }),
        ),
      ),
    );
    dashboard.addWidgets(
      graph("DynamoDB capacity", [
        table.metricConsumedReadCapacityUnits({ period: PERIOD, label: "Read units" }),
        table.metricConsumedWriteCapacityUnits({ period: PERIOD, label: "Write units" }),
      ]),
      graph("DynamoDB throttles and errors", [shared.throttles, shared.systemErrors]),
      graph(
        "Sandbox",
        [this.own(METRIC.sandboxRefusals, "Sum", "Refusals"), shared.runnerErrors],
        [this.own(METRIC.sandboxRunDuration, "p99", "Run p99 (ms)")],
      ),
    );
    dashboard.addWidgets(
      graph("Service requests and refusals", [
        this.own(METRIC.requests),
        this.own(METRIC.responses4xx),
        this.own(METRIC.responses5xx),
        this.own(METRIC.rateLimitRefusals),
      ]),
      graph("Tokens", [
        this.own(METRIC.tokensCreated),
        this.own(METRIC.tokensRead),
        this.own(METRIC.tokensDetokenized),
      ]),
      graph(
        "Proxy destinations",
        [this.own(METRIC.proxyDestinationResponses, "Sum", "Responses")],
        [this.own(METRIC.proxyDestinationLatency, "p99", "Latency p99 (ms)")],
      ),
    );
    dashboard.addWidgets(
      graph("Service latency p99 by route (ms)", [this.own(METRIC.latency, "p99")]),
      graph("Callbacks (by outcome) and the sweep", [
        this.own(METRIC.callbackRecords, "Sum", "Callback records"),
        this.own(METRIC.sweepRuns, "Sum", "Sweep runs"),
        this.own(METRIC.sweepTokensDeleted, "Sum", "Tokens expired"),
        this.own(METRIC.sweepItemsPutOff, "Sum", "Items put off"),
      ]),
    );
    return dashboard;
  }
}
