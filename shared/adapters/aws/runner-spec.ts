// The runner functions' settings, apart from their adapter: config.ts and the stack read them without
// loading the Lambda client.

/**
 * How every tenant's runner function is built, set by the stack (SVC_RUNNER_*): one bundle (the template
 * function's code in the CDK asset bucket), one execution role that grants nothing but its log group.
 */
export interface RunnerSpec {
  /** Start of every runner function's name; the control plane's IAM is scoped to `function:<prefix>*`. */
  prefix: string;
  roleArn: string;
  codeBucket: string;
  codeKey: string;
  runtime: string;
  handler: string;
  memoryMb: number;
  timeoutSeconds: number;
  architecture: "arm64" | "x86_64";
  /** The one log group all runner functions write to (created by the stack, with retention). */
  logGroup: string;
  /** Tagged on each function, so an operator can tell which stack made it. */
  stackName: string;
}

/** Lambda names: at most 64 of [A-Za-z0-9-_]. Tenant ids are UUIDs (36), then `-` and an 8-hex version. */
export const VERSION_LENGTH = 8;
export const MAX_PREFIX_LENGTH = 64 - 36 - 1 - VERSION_LENGTH;
export const PREFIX_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_PREFIX_LENGTH}}$`);
