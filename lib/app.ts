import { type App, Validations } from "aws-cdk-lib";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { AwsSolutionsChecks } from "cdk-nag";
import { DEFAULT_ROOT_KEY_PARAMETER_NAME, VaultStack } from "./vault-stack.ts";

export const STACK_NAME = "SvcVault";

/**
 * Builds the project's own app from context (cdk.json or -c key=value), with cdk-nag's AwsSolutions checks.
 * bin/app.ts and test/infra both call this, so the tests check exactly what `cdk synth` produces.
 *   rootKeyParameterName  SSM parameter with the root key hash (default /svc-vault/root-key-hash)
 *   logRetentionDays      CloudWatch retention of function and access logs (default 30)
 *   emailSender           verified SES identity for invitation e-mails (default no-reply@example.com)
 *   invitationUrl         where invitation links point (default: the API's /invitations/accept)
 *   alarmEmail            an address the alarms notify (default: none, alarms show in the console only)
 * Anything else is a prop of TokenizationVault (lib/tokenization-vault.ts): an app of your own sets it there.
 */
export function buildApp(app: App): VaultStack {
  const context = (name: string) => app.node.tryGetContext(name) as string | number | undefined;
  const retentionContext = context("logRetentionDays");
  const logRetention = retentionContext === undefined ? RetentionDays.ONE_MONTH : Number(retentionContext);
  if (!Object.values(RetentionDays).includes(logRetention))
    throw new Error(
      `Context logRetentionDays must be one of CloudWatch's retention periods: ${retentionContext}`,
    );
  const invitationUrl = context("invitationUrl");
  const alarmEmail = context("alarmEmail");

  const stack = new VaultStack(app, STACK_NAME, {
    emailSender: String(context("emailSender") ?? "no-reply@example.com"),
    ...(invitationUrl ? { invitationUrl: String(invitationUrl) } : {}),
    ...(alarmEmail ? { alarmEmail: String(alarmEmail) } : {}),
    description: "svc-vault: self-hosted data tokenization vault",
    // Kept from before the construct derived names, so a deployed stack keeps reading the parameter it has.
    rootKeyParameterName: String(context("rootKeyParameterName") ?? DEFAULT_ROOT_KEY_PARAMETER_NAME),
    logRetention,
  });
  // cdk-nag v3 is a CDK policy-validation plugin (v2 was an Aspect): any unacknowledged finding, error or
  // warning, fails synthesis and is written to cdk.out's validation report. Only here: the construct itself
  // forces no checks on the apps that embed it.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stack;
}
