import { systemClock, TestClock } from "#shared/adapters/clock.ts";
import { AuditItems } from "#shared/adapters/dynamodb/audit-items.ts";
import { createDocumentClient } from "#shared/adapters/dynamodb/client.ts";
import type { Config } from "#shared/config.ts";
import { protectEndpoint } from "#shared/egress/address-guard.ts";
import { metricsAdapter } from "#shared/observability/metrics.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { FlushableMetrics } from "#shared/ports/metrics.ts";
import { traced } from "#shared/tracer.ts";
import type { UsageMeter } from "./usage-meter.ts";

/**
 * The table and the clock: what every function that touches data starts from. `meter` (the cost run only) sums
 * the capacity every table call consumes; `metrics` replaces the mode's metrics adapter (tests).
 */
export function composeTable(
  cfg: Config,
  options: { meter?: UsageMeter | undefined; metrics?: FlushableMetrics | undefined } = {},
) {
  const testClock = cfg.testClock ? new TestClock() : undefined;
  const clock: Clock = testClock ?? systemClock;
  // The document client shares its DynamoDBClient's middleware stack: capturing it traces every table call.
  const dynamo = traced(createDocumentClient({ region: cfg.region, endpoint: cfg.dynamodbEndpoint }));
  options.meter?.capacity.install(dynamo);
  // A tenant's proxy or callback never reaches the table's endpoint (DynamoDB Local checks no credentials), nor
  // an AWS endpoint set by AWS_ENDPOINT_URL* (LocalStack's KMS or SQS in a SAM set-up: docs/operations.md).
  if (cfg.dynamodbEndpoint) protectEndpoint(cfg.dynamodbEndpoint);
  for (const [name, value] of Object.entries(process.env))
    if (name.startsWith("AWS_ENDPOINT_URL") && value) protectEndpoint(value);
  return {
    config: cfg,
    clock,
    testClock,
    dynamo,
    /** The function's metrics (EMF in AWS), written once per invocation by its handler's wrapper. */
    metrics: options.metrics ?? metricsAdapter(cfg),
    /** Audit items written with each store's own writes. */
    audit: new AuditItems(cfg.tableName, cfg.logRetentionDays),
    /** host:port names this service answers on (set by the local server once listening): proxies never call them. */
    selfHosts: [] as string[],
  };
}

export type Table = ReturnType<typeof composeTable>;
