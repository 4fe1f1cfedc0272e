import { Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { ApiFunction } from "./api-function.ts";

/** Every 15 minutes, so an expired token or cvc is gone well within the hour (DynamoDB TTL is the backstop). */
export const SWEEP_INTERVAL = Duration.minutes(15);
/** Not behind API Gateway: the purge of deleted tenants uses what the expiry work leaves of this (tenant-purge.ts). */
export const SWEEP_TIMEOUT = Duration.minutes(10);

export interface SweeperProps {
  table: ITable;
  logRetention?: RetentionDays;
}

/**
 * The scheduled sweep: deletes expired tokens, removes cvcs past their hour and purges deleted tenants. It
 * needs the table only (no KMS: it never opens data).
 */
export class Sweeper extends Construct {
  readonly fn: ApiFunction;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: SweeperProps) {
    super(scope, id);
    this.fn = new ApiFunction(this, "SweepFunction", {
      group: "sweep",
      description: "svc-vault expiry sweep",
      timeout: SWEEP_TIMEOUT,
      logRetention: props.logRetention,
    });
    this.fn.bindTable(props.table, "readWrite");
    // The purge of a deleted tenant is the one Scan of the table (docs/security.md, "Tenant deletion").
    this.fn.function.addToRolePolicy(
      new PolicyStatement({ actions: ["dynamodb:Scan"], resources: [props.table.tableArn] }),
    );
    this.rule = new Rule(this, "Schedule", {
      description: "svc-vault: delete expired tokens and cvcs",
      schedule: Schedule.rate(SWEEP_INTERVAL),
    });
    this.rule.addTarget(new LambdaFunction(this.fn.function, { retryAttempts: 2 }));
  }
}
