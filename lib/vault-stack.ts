import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { TokenizationVault, type TokenizationVaultProps } from "./tokenization-vault.ts";

export const DEFAULT_ROOT_KEY_PARAMETER_NAME = "/svc-vault/root-key-hash";

export interface VaultStackProps extends StackProps, TokenizationVaultProps {}

/**
 * The project's own stack: one TokenizationVault and its outputs. One stack rather than two because a
 * stateful/stateless split across stacks buys little here and costs CloudFormation exports between them, which
 * lock the producer (an export in use cannot change or go away), and a two-step deploy for operators. The
 * stateful half is protected where it matters instead: the table and key are retained on deletion and the table
 * has deletion protection.
 *
 * The vault's id is "Default", which CDK leaves out of logical IDs: the table, key and every other resource keep
 * the logical IDs they had before the construct existed, so an update never replaces them.
 */
export class VaultStack extends Stack {
  readonly vault: TokenizationVault;

  constructor(scope: Construct, id: string, props: VaultStackProps) {
    super(scope, id, props);
    this.vault = new TokenizationVault(this, "Default", props);

    new CfnOutput(this, "ApiUrl", { value: this.vault.url, description: "Base URL of the API" });
    new CfnOutput(this, "TableName", {
      value: this.vault.data.table.tableName,
      description: "DynamoDB table",
    });
    new CfnOutput(this, "SandboxRunnerPrefix", {
      value: this.vault.http.sandboxRunners.prefix,
      description: "Name prefix of the tenants' sandbox runner functions (scripts/prune-sandbox-runners.ts)",
    });
    new CfnOutput(this, "RootKeyParameter", {
      value: this.vault.rootKeyParameterName,
      description: "SSM SecureString parameter to hold the root key's SHA-256 (docs/operations.md)",
    });
  }

  get data(): TokenizationVault["data"] {
    return this.vault.data;
  }
  get http(): TokenizationVault["http"] {
    return this.vault.http;
  }
  get callbacks(): TokenizationVault["callbacks"] {
    return this.vault.callbacks;
  }
  get sweeper(): TokenizationVault["sweeper"] {
    return this.vault.sweeper;
  }
  get rewrap(): TokenizationVault["rewrap"] {
    return this.vault.rewrap;
  }
}
