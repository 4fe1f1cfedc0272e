import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, BillingMode, ProjectionType, Table } from "aws-cdk-lib/aws-dynamodb";
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Key, KeySpec, KeyUsage } from "aws-cdk-lib/aws-kms";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { TABLE_KEYS } from "#shared/adapters/dynamodb/schema.ts";
import { MAX_ATTEMPTS } from "#shared/domain/reactors/callback-job.ts";
import { CALLBACK_QUEUE_VISIBILITY_TIMEOUT } from "./callback-consumer.ts";

/** Receives beyond this many times send a reactor callback message to the dead-letter queue (the code's limit). */
export const CALLBACK_MAX_RECEIVE_COUNT = MAX_ATTEMPTS;

export interface VaultDataProps {
  /** The data key's alias, `alias/…`: unique per account and region (TokenizationVault derives it). */
  keyAlias: string;
  /**
   * What happens to the table when it leaves the stack (default RETAIN). Deletion protection stays on unless
   * this is DESTROY, which could not delete a protected table.
   */
  tableRemovalPolicy?: RemovalPolicy;
}

/**
 * The stateful half of the service: everything here outlives a deployment. The table (by default) and the key
 * are retained when the stack is deleted; the table also refuses deletion while protection is on.
 */
export class VaultData extends Construct {
  readonly table: Table;
  readonly dataKey: Key;
  /** Signs tenant deletion receipts (ECDSA P-256); its public key is published for verifying them. */
  readonly receiptKey: Key;
  readonly callbackQueue: Queue;
  readonly callbackDeadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: VaultDataProps) {
    super(scope, id);
    const k = TABLE_KEYS;
    const tableRemovalPolicy = props.tableRemovalPolicy ?? RemovalPolicy.RETAIN;

    // Same layout as shared/adapters/dynamodb/bootstrap.ts (local mode); test/infra compares the two.
    this.table = new Table(this, "Table", {
      partitionKey: { name: k.partitionKey, type: AttributeType.STRING },
      sortKey: { name: k.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: k.ttlAttribute,
      deletionProtection: tableRemovalPolicy !== RemovalPolicy.DESTROY,
      removalPolicy: tableRemovalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: k.gsi1Name,
      partitionKey: { name: k.gsi1PartitionKey, type: AttributeType.STRING },
      sortKey: { name: k.gsi1SortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    // Wraps per-tenant data keys (envelope encryption of token data). Retained whatever the table's policy:
    // without it no backup or copy of the table can be opened.
    this.dataKey = new Key(this, "DataKey", {
      description: "svc-vault: wraps per-tenant data keys for token data",
      enableKeyRotation: true,
      alias: props.keyAlias,
      policy: keyAdministrationPolicy(),
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Signs deletion receipts, which outlive the tenant: retained, so old receipts stay verifiable. Asymmetric
    // keys cannot rotate automatically; a new key signs new receipts while the old one still verifies.
    this.receiptKey = new Key(this, "ReceiptKey", {
      description: "svc-vault: signs tenant deletion receipts",
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      policy: keyAdministrationPolicy(),
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Reactor callbacks (not consumed yet). Messages carry no token data, so SQS-managed SSE is enough.
    this.callbackDeadLetterQueue = new Queue(this, "CallbackDeadLetterQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows, so failed deliveries can be inspected and redriven.
      retentionPeriod: Duration.days(14),
    });
    this.callbackQueue = new Queue(this, "CallbackQueue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the consumer's timeout, as AWS advises for Lambda event sources.
      visibilityTimeout: CALLBACK_QUEUE_VISIBILITY_TIMEOUT,
      deadLetterQueue: { queue: this.callbackDeadLetterQueue, maxReceiveCount: CALLBACK_MAX_RECEIVE_COUNT },
    });
  }
}

/**
 * Key administration actions (no Encrypt, Decrypt, GenerateDataKey*, ReEncrypt*, Sign): what the account, through
 * IAM, may do with the vault's keys. Cryptographic use is granted in the key policy to the vault's function roles
 * only (ApiFunction's bind helpers), not delegated to IAM, where any principal with `kms:Decrypt` on `*`
 * (administrators, power users, the deploy role) could otherwise unwrap every tenant's data key.
 * An administrator can still change the key policy (kms:PutKeyPolicy): that is a visible, audited change.
 */
export const KEY_ADMIN_ACTIONS = [
  // Not kms:Create*: kms:CreateGrant would let an identity policy grant any principal the key's use.
  "kms:CreateAlias",
  "kms:Describe*",
  "kms:Enable*",
  "kms:List*",
  "kms:Put*",
  "kms:Update*",
  "kms:Revoke*",
  "kms:Disable*",
  "kms:Get*",
  "kms:Delete*",
  "kms:TagResource",
  "kms:UntagResource",
  "kms:ScheduleKeyDeletion",
  "kms:CancelKeyDeletion",
  "kms:RotateKeyOnDemand",
];

function keyAdministrationPolicy(): PolicyDocument {
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        principals: [new AccountRootPrincipal()],
        actions: KEY_ADMIN_ACTIONS,
        resources: ["*"],
      }),
    ],
  });
}
