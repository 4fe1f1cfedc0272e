/**
 * The package's `svc-vault/cdk` entry (built to dist/cdk/ by scripts/build-cdk.ts when packed): the vault as a
 * construct for any CDK app, and the types of what it exposes.
 */
export { ApiFunction } from "./constructs/api-function.ts";
export { VaultBackup, type VaultBackupOptions } from "./constructs/backup.ts";
export { CallbackConsumer } from "./constructs/callback-consumer.ts";
export { EdgeFirewall, type EdgeFirewallOptions } from "./constructs/edge-firewall.ts";
export { type VaultDomain, VaultHttpApi } from "./constructs/http-api.ts";
export { type AlarmThresholds, DEFAULT_ALARM_THRESHOLDS, VaultMonitoring } from "./constructs/monitoring.ts";
export { SandboxRunners } from "./constructs/sandbox-runners.ts";
export { Sweeper } from "./constructs/sweeper.ts";
export { VaultData } from "./constructs/vault-data.ts";
export { TokenizationVault, type TokenizationVaultProps } from "./tokenization-vault.ts";
