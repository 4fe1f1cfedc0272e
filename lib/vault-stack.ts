import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { routeList } from "#shared/api/index.ts";
import { CallbackConsumer } from "./constructs/callback-consumer.ts";
import { VaultHttpApi } from "./constructs/http-api.ts";
import { Sweeper } from "./constructs/sweeper.ts";
import { VaultData } from "./constructs/vault-data.ts";

export const DEFAULT_ROOT_KEY_PARAMETER_NAME = "/svc-vault/root-key-hash";

export interface VaultStackProps extends StackProps {
  /** SSM SecureString holding the root key's SHA-256 hash (hex); created by the operator. */
  rootKeyParameterName: string;
  /** CloudWatch retention of function and access logs. */
  logRetention?: RetentionDays;
  /** Verified SES identity that sends invitation e-mails. */
  emailSender: string;
  /** Where invitation links point (a front end); defaults to the API's POST /invitations/accept. */
  invitationUrl?: string;
}

/**
 * One stack, two halves: VaultData (table, key, queues) and VaultHttpApi (functions, routes).
 * One stack rather than two because a stateful/stateless split across stacks buys little here and costs
 * CloudFormation exports between them, which lock the producer (an export in use cannot change or go away),
 * and a two-step deploy for operators. The stateful half is protected where it matters instead: the table
 * and key are retained on deletion and the table has deletion protection; their construct paths stay fixed
 * so logical IDs never change. Splitting later is a matter of moving VaultData into its own stack.
 */
export class VaultStack extends Stack {
  readonly data: VaultData;
  readonly http: VaultHttpApi;
  readonly sweeper: Sweeper;
  readonly callbacks: CallbackConsumer;

  constructor(scope: Construct, id: string, props: VaultStackProps) {
    super(scope, id, props);
    this.data = new VaultData(this, "Data");
    this.http = new VaultHttpApi(this, "Http", {
      routes: routeList,
      table: this.data.table,
      dataKey: this.data.dataKey,
      emailSender: props.emailSender,
      invitationUrl: props.invitationUrl,
      rootKeyParameterName: props.rootKeyParameterName,
      logRetention: props.logRetention,
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

    new CfnOutput(this, "ApiUrl", { value: this.http.url, description: "Base URL of the API" });
    new CfnOutput(this, "TableName", { value: this.data.table.tableName, description: "DynamoDB table" });
    new CfnOutput(this, "SandboxRunnerPrefix", {
      value: this.http.sandboxRunners.prefix,
      description: "Name prefix of the tenants' sandbox runner functions (scripts/prune-sandbox-runners.ts)",
    });
  }
}
