import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { BackupPlan, BackupPlanRule, BackupResource, BackupVault } from "aws-cdk-lib/aws-backup";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Schedule } from "aws-cdk-lib/aws-events";
import { Construct } from "constructs";

export interface VaultBackupOptions {
  /** Days each daily backup is kept (default 35). */
  retentionDays?: number;
  /**
   * A backup vault in another region (or account) each backup is copied to, by ARN. DynamoDB copies need
   * AWS Backup's advanced features for DynamoDB turned on in the account (a one-time setting).
   */
  copyToVaultArn?: string;
  /** Days a copy is kept (default: as the backup). */
  copyRetentionDays?: number;
}

export interface VaultBackupProps extends VaultBackupOptions {
  table: ITable;
  /** The backup vault's name, unique per account and region. */
  vaultName: string;
}

/**
 * A daily AWS Backup of the table, beside its point-in-time recovery (35 days, same region): backups kept as
 * long as asked, and copied to another region when a vault there is given. Token data stays sealed under the
 * data key in every copy, so a copy is readable only where that key (a multi-region key, or this region's) is.
 */
export class VaultBackup extends Construct {
  readonly plan: BackupPlan;
  readonly vault: BackupVault;

  constructor(scope: Construct, id: string, props: VaultBackupProps) {
    super(scope, id);
    const retention = Duration.days(props.retentionDays ?? 35);
    this.vault = new BackupVault(this, "Vault", {
      backupVaultName: props.vaultName,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.plan = new BackupPlan(this, "Plan", { backupVault: this.vault });
    this.plan.addRule(
      new BackupPlanRule({
        ruleName: "Daily",
        scheduleExpression: Schedule.cron({ hour: "3", minute: "0" }),
        deleteAfter: retention,
        ...(props.copyToVaultArn
          ? {
              copyActions: [
                {
                  destinationBackupVault: BackupVault.fromBackupVaultArn(
                    this,
                    "CopyTarget",
                    props.copyToVaultArn,
                  ),
                  deleteAfter: props.copyRetentionDays ? Duration.days(props.copyRetentionDays) : retention,
                },
              ],
            }
          : {}),
      }),
    );
    this.plan.addSelection("Table", { resources: [BackupResource.fromDynamoDbTable(props.table)] });
  }
}
