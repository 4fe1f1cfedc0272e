import { type App, Validations } from "aws-cdk-lib";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { AwsSolutionsChecks } from "cdk-nag";
import { DEFAULT_ROOT_KEY_PARAMETER_NAME, VaultStack } from "./vault-stack.ts";

export const STACK_NAME = "SvcVault";

/** SSM parameter names: letters, digits, _ . - and / as separator, at most 1011 characters. */
const PARAMETER_NAME = /^\/?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/**
 * Builds the whole app from context (cdk.json or -c key=value), with cdk-nag's AwsSolutions checks.
 * bin/app.ts and test/infra both call this, so the tests check exactly what `cdk synth` produces.
 *   rootKeyParameterName  SSM parameter with the root key hash (default /svc-vault/root-key-hash)
 *   logRetentionDays      CloudWatch retention of function and access logs (default 30)
 *   emailSender           verified SES identity for invitation e-mails (default no-reply@example.com)
 *   invitationUrl         where invitation links point (default: the API's /invitations/accept)
 */
export function buildApp(app: App): VaultStack {
  const rootKeyParameterName = String(
    app.node.tryGetContext("rootKeyParameterName") ?? DEFAULT_ROOT_KEY_PARAMETER_NAME,
  );
  if (!PARAMETER_NAME.test(rootKeyParameterName) || rootKeyParameterName.length > 1011)
    throw new Error(
      `Context rootKeyParameterName is not a valid SSM parameter name: ${rootKeyParameterName}`,
    );

  const retentionContext = app.node.tryGetContext("logRetentionDays");
  const logRetention = retentionContext === undefined ? RetentionDays.ONE_MONTH : Number(retentionContext);
  if (!Object.values(RetentionDays).includes(logRetention))
    throw new Error(
      `Context logRetentionDays must be one of CloudWatch's retention periods: ${retentionContext}`,
    );

  const emailSender = String(app.node.tryGetContext("emailSender") ?? "no-reply@example.com");
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(emailSender))
    throw new Error(`Context emailSender must be an e-mail address: ${emailSender}`);
  const invitationUrl = app.node.tryGetContext("invitationUrl") as string | undefined;

  const stack = new VaultStack(app, STACK_NAME, {
    emailSender,
    ...(invitationUrl ? { invitationUrl } : {}),
    description: "svc-vault: self-hosted data tokenization vault",
    rootKeyParameterName,
    logRetention,
  });
  // cdk-nag v3 is a CDK policy-validation plugin (v2 was an Aspect): any unacknowledged finding, error or
  // warning, fails synthesis and is written to cdk.out's validation report.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stack;
}
