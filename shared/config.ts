import * as z from "zod";
import { PREFIX_PATTERN, type RunnerSpec } from "#shared/adapters/aws/runner-spec.ts";
import { DEFAULT_RENDER_LIMITS } from "#shared/domain/tokens/render-limits.ts";
import { DEFAULT_OUTBOUND_LIMITS } from "#shared/sandbox/outbound-request.ts";

/**
 * Environment parsed once, with zod, at first use. Local defaults exist only where local mode needs them;
 * AWS mode fails fast when something it needs is missing.
 */
const flag = z
  .enum(["0", "1", "true", "false", ""])
  .optional()
  .transform((v) => v === "1" || v === "true");

/** A whole number from `min` to `max`, from its decimal text. */
const wholeNumber = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Every variable the service reads; docs/operations.md's table is written from it (shared/config-docs.ts). */
const envShape = {
  SVC_MODE: z.enum(["local", "aws"]).optional(),
  AWS_LAMBDA_FUNCTION_NAME: z.string().optional(),
  AWS_REGION: z.string().optional(),
  SVC_TABLE_NAME: z.string().min(3).optional(),
  SVC_DYNAMODB_ENDPOINT: z.url().optional(),
  SVC_DATA_DIR: z.string().min(1).default(".svc-data"),
  SVC_ROOT_KEY: z.string().min(16).optional(),
  SVC_ROOT_KEY_HASH: z
    .string()
    .regex(/^[a-f0-9]{64}$/)
    .optional(),
  SVC_ROOT_KEY_PARAMETER: z.string().optional(),
  SVC_KMS_KEY_ID: z.string().min(1).optional(),
  SVC_MASTER_KEY_FILE: z.string().min(1).optional(),
  SVC_LOCAL_KMS_DIR: z.string().min(1).optional(),
  SVC_RECEIPT_KEY_ID: z.string().min(1).optional(),
  SVC_EMAIL_SENDER: z.string().min(3).optional(),
  // The tenants' runner functions (AWS): set together by the stack, or not at all.
  SVC_RUNNER_PREFIX: z.string().regex(PREFIX_PATTERN).optional(),
  SVC_RUNNER_ROLE_ARN: z
    .string()
    .regex(/^arn:[a-z-]+:iam::\d{12}:role\/.+$/)
    .optional(),
  SVC_RUNNER_CODE_BUCKET: z.string().min(3).optional(),
  SVC_RUNNER_CODE_KEY: z.string().min(1).optional(),
  SVC_RUNNER_RUNTIME: z
    .string()
    .regex(/^nodejs\d+\.x$/)
    .optional(),
  SVC_RUNNER_HANDLER: z.string().min(1).optional(),
  SVC_RUNNER_MEMORY_MB: wholeNumber(128, 10_240).optional(),
  SVC_RUNNER_TIMEOUT_SECONDS: wholeNumber(1, 900).optional(),
  SVC_RUNNER_ARCHITECTURE: z.enum(["arm64", "x86_64"]).optional(),
  SVC_RUNNER_LOG_GROUP: z.string().min(1).optional(),
  SVC_STACK_NAME: z.string().min(1).optional(),
  // Where tenant code runs: child processes here (local), the tenant's runner function (AWS), or nowhere.
  SVC_SANDBOX: z.enum(["process", "runner", "none"]).optional(),
  SVC_CALLBACK_QUEUE_URL: z.url().optional(),
  // The callback consumer moves a job that no retry can fix here at once (lib/constructs/callback-consumer.ts).
  SVC_CALLBACK_DLQ_URL: z.url().optional(),
  // Pages of key rewrap jobs (lib/constructs/rewrap-worker.ts).
  SVC_REWRAP_QUEUE_URL: z.url().optional(),
  SVC_SYNC_REACT_TIMEOUT_MS: wholeNumber(100, 25_000).default(20_000),
  SVC_CALLBACK_RETRY_BASE_SECONDS: z.coerce.number().min(0.01).max(900).default(60),
  SVC_API_URL: z.url().optional(),
  SVC_INVITATION_URL: z.url().optional(),
  PORT: z.string().optional(),
  SVC_TEST_CLOCK: flag,
  SVC_PROXY_ALLOW_PRIVATE: z.enum(["0", "1", "true", "false"]).optional(),
  SVC_LOG_RETENTION_DAYS: wholeNumber(1, 3650).default(365),
  SVC_AUTH_CACHE_SECONDS: wholeNumber(0, 60).default(5),
  SVC_SANDBOX_PROCESSES: wholeNumber(2, 256).default(16),
  SVC_SANDBOX_TENANT_PROCESSES: wholeNumber(1, 256).optional(),
  // What one run of tenant code may do with fetch (docs/sandbox.md#outbound-http).
  SVC_SANDBOX_FETCH_MAX_REQUESTS: wholeNumber(0, 10_000).default(DEFAULT_OUTBOUND_LIMITS.maxRequests),
  SVC_SANDBOX_FETCH_MAX_BYTES_OUT: wholeNumber(0, 100 * 1024 * 1024).default(
    DEFAULT_OUTBOUND_LIMITS.maxBytesOut,
  ),
  SVC_SANDBOX_FETCH_MAX_BYTES_IN: wholeNumber(0, 100 * 1024 * 1024).default(
    DEFAULT_OUTBOUND_LIMITS.maxBytesIn,
  ),
  SVC_SANDBOX_FETCH_TIMEOUT_MS: wholeNumber(100, 300_000).default(DEFAULT_OUTBOUND_LIMITS.timeoutMs),
  SVC_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  SVC_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).max(1_000_000).default(1000),
  // At least 2: keys handed out spend half of a window (browserPolicy), and half of 1 would be all of it.
  SVC_RATE_LIMIT_BURST: wholeNumber(2, 100_000_000).optional(),
  // Expression render time (docs/expressions.md, "Render budgets").
  SVC_EXPRESSION_REQUEST_MS: wholeNumber(1, 60_000).default(DEFAULT_RENDER_LIMITS.requestMs),
  SVC_EXPRESSION_TENANT_MS_PER_SECOND: wholeNumber(0, 1000).default(DEFAULT_RENDER_LIMITS.tenantMsPerSecond),
  SVC_EXPRESSION_TENANT_BURST_MS: wholeNumber(1, 600_000).default(DEFAULT_RENDER_LIMITS.tenantBurstMs),
  SVC_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(600).default(10),
};

export type ConfigVariable = keyof typeof envShape;
export const CONFIG_VARIABLES = Object.keys(envShape) as ConfigVariable[];

const envSchema = z
  .object(envShape)
  .superRefine((env, ctx) => {
    const set = RUNNER_VARIABLES.filter((name) => env[name] !== undefined);
    if (set.length > 0 && set.length < RUNNER_VARIABLES.length)
      ctx.addIssue({ code: "custom", message: `set all of ${RUNNER_VARIABLES.join(", ")}, or none` });
  })
  .transform((env) => {
    const mode = env.SVC_MODE ?? (env.AWS_LAMBDA_FUNCTION_NAME ? "aws" : "local");
    return {
      mode,
      region: env.AWS_REGION ?? "us-east-1",
      tableName: env.SVC_TABLE_NAME ?? (mode === "local" ? "svc-vault" : undefined),
      dynamodbEndpoint: env.SVC_DYNAMODB_ENDPOINT,
      dataDir: env.SVC_DATA_DIR,
      rootKey: env.SVC_ROOT_KEY,
      rootKeyHash: env.SVC_ROOT_KEY_HASH,
      rootKeyParameter: env.SVC_ROOT_KEY_PARAMETER,
      kmsKeyId: env.SVC_KMS_KEY_ID,
      // Local mode: the master key file, checked against the data by startLocalService before it is set here.
      masterKeyFile: env.SVC_MASTER_KEY_FILE,
      // Local stand-ins for tenants' own KMS keys (local-customer-keys.ts): beside the master key, never in the data.
      localKmsDir:
        env.SVC_LOCAL_KMS_DIR ??
        (env.SVC_MASTER_KEY_FILE ? `${env.SVC_MASTER_KEY_FILE}.customer-keys` : undefined),
      // AWS: the asymmetric KMS key (ECC_NIST_P256) that signs deletion receipts; locally one derived from the master key.
      receiptKeyId: env.SVC_RECEIPT_KEY_ID,
      emailSender: env.SVC_EMAIL_SENDER ?? "svc-vault@localhost",
      runner: runnerSpec(env),
      sandbox:
        env.SVC_SANDBOX ?? (mode === "local" && env.SVC_RUNNER_PREFIX === undefined ? "process" : "runner"),
      callbackQueueUrl: env.SVC_CALLBACK_QUEUE_URL,
      callbackDeadLetterUrl: env.SVC_CALLBACK_DLQ_URL,
      rewrapQueueUrl: env.SVC_REWRAP_QUEUE_URL,
      // A synchronous react runs at most this long (API Gateway answers within 30 s).
      syncReactTimeoutMs: env.SVC_SYNC_REACT_TIMEOUT_MS,
      // Local mode: the first retry of a failed callback waits this long (doubling each time).
      callbackRetryBaseSeconds: env.SVC_CALLBACK_RETRY_BASE_SECONDS,
      apiUrl: env.SVC_API_URL,
      // Where the invitation e-mail's link points; a front end there POSTs the code to /invitations/accept.
      invitationUrl: env.SVC_INVITATION_URL ?? `http://127.0.0.1:${env.PORT ?? "3000"}/invitations/accept`,
      testClock: env.SVC_TEST_CLOCK,
      // Off unless set, locally too: a proxy or callback reaching loopback/private addresses is opt-in.
      proxyAllowPrivate: env.SVC_PROXY_ALLOW_PRIVATE === "1" || env.SVC_PROXY_ALLOW_PRIVATE === "true",
      logRetentionDays: env.SVC_LOG_RETENTION_DAYS,
      authCacheSeconds: env.SVC_AUTH_CACHE_SECONDS,
      maxBodyBytes: env.SVC_MAX_BODY_BYTES,
      // The local sandbox pool: processes in all, and at most this many busy for one tenant (docs/sandbox.md).
      sandboxProcesses: env.SVC_SANDBOX_PROCESSES,
      sandboxTenantProcesses: env.SVC_SANDBOX_TENANT_PROCESSES,
      // Per run of tenant code: requests (redirects included), body bytes each way, one request's time.
      sandboxFetch: {
        maxRequests: env.SVC_SANDBOX_FETCH_MAX_REQUESTS,
        maxBytesOut: env.SVC_SANDBOX_FETCH_MAX_BYTES_OUT,
        maxBytesIn: env.SVC_SANDBOX_FETCH_MAX_BYTES_IN,
        timeoutMs: env.SVC_SANDBOX_FETCH_TIMEOUT_MS,
      },
      // Local mode: on SIGTERM/SIGINT, requests in flight get this long to finish before the rest is stopped.
      shutdownGraceSeconds: env.SVC_SHUTDOWN_GRACE_SECONDS,
      // Per tenant (anonymous routes: per source address); 0 = off. Burst defaults to 10 s of the rate.
      // One budget for all the renders of a request; each tenant's share of a process (0: no share kept).
      renderLimits: {
        renderMs: DEFAULT_RENDER_LIMITS.renderMs,
        requestMs: env.SVC_EXPRESSION_REQUEST_MS,
        tenantMsPerSecond: env.SVC_EXPRESSION_TENANT_MS_PER_SECOND,
        tenantBurstMs: env.SVC_EXPRESSION_TENANT_BURST_MS,
      },
      rateLimit: {
        ratePerSecond: env.SVC_RATE_LIMIT_PER_SECOND,
        burst: env.SVC_RATE_LIMIT_BURST ?? Math.max(2, Math.ceil(env.SVC_RATE_LIMIT_PER_SECOND * 10)),
      },
    } as const;
  })
  .superRefine((cfg, ctx) => {
    if (!cfg.tableName) ctx.addIssue({ code: "custom", message: "SVC_TABLE_NAME is required in AWS mode" });
    if (cfg.mode === "aws" && cfg.testClock)
      ctx.addIssue({ code: "custom", message: "SVC_TEST_CLOCK is refused in AWS mode" });
    // Fail closed: in AWS, tenant code runs only in the tenant's runner function, never in this (privileged)
    // function. A function that runs no tenant code says so with SVC_SANDBOX=none.
    if (cfg.mode === "aws" && cfg.sandbox === "process")
      ctx.addIssue({
        code: "custom",
        message: "SVC_SANDBOX=process is refused in AWS mode: tenant code runs only in the runner functions",
      });
    if (cfg.sandbox === "runner" && !cfg.runner)
      ctx.addIssue({
        code: "custom",
        message:
          cfg.mode === "aws"
            ? `${RUNNER_VARIABLES.join(", ")} are required in AWS mode (tenant code runs only in the tenant's runner function); set SVC_SANDBOX=none on a function that runs no tenant code`
            : `SVC_SANDBOX=runner needs all of ${RUNNER_VARIABLES.join(", ")}`,
      });
    if (cfg.mode === "aws" && cfg.rootKey)
      ctx.addIssue({
        code: "custom",
        message:
          "SVC_ROOT_KEY is refused in AWS mode; store its SHA-256 hash in SSM (SVC_ROOT_KEY_PARAMETER)",
      });
  });

const RUNNER_VARIABLES = [
  "SVC_RUNNER_PREFIX",
  "SVC_RUNNER_ROLE_ARN",
  "SVC_RUNNER_CODE_BUCKET",
  "SVC_RUNNER_CODE_KEY",
  "SVC_RUNNER_RUNTIME",
  "SVC_RUNNER_HANDLER",
  "SVC_RUNNER_MEMORY_MB",
  "SVC_RUNNER_TIMEOUT_SECONDS",
  "SVC_RUNNER_ARCHITECTURE",
  "SVC_RUNNER_LOG_GROUP",
  "SVC_STACK_NAME",
] as const;

type RunnerEnv = { [name in (typeof RUNNER_VARIABLES)[number]]?: string | number | undefined };

/** The runner functions' definition, when the stack set it (all of SVC_RUNNER_*, checked above). */
function runnerSpec(env: RunnerEnv): RunnerSpec | undefined {
  if (RUNNER_VARIABLES.some((name) => env[name] === undefined)) return undefined;
  return {
    prefix: String(env.SVC_RUNNER_PREFIX),
    roleArn: String(env.SVC_RUNNER_ROLE_ARN),
    codeBucket: String(env.SVC_RUNNER_CODE_BUCKET),
    codeKey: String(env.SVC_RUNNER_CODE_KEY),
    runtime: String(env.SVC_RUNNER_RUNTIME),
    handler: String(env.SVC_RUNNER_HANDLER),
    memoryMb: Number(env.SVC_RUNNER_MEMORY_MB),
    timeoutSeconds: Number(env.SVC_RUNNER_TIMEOUT_SECONDS),
    architecture: env.SVC_RUNNER_ARCHITECTURE === "x86_64" ? "x86_64" : "arm64",
    logGroup: String(env.SVC_RUNNER_LOG_GROUP),
    stackName: String(env.SVC_STACK_NAME),
  };
}

export type Config = z.output<typeof envSchema> & { tableName: string };

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "unset", as shells and env files commonly write it.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((i) => `${i.path.join(".") || "env"}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${reasons}`);
  }
  return parsed.data as Config;
}

let cached: Config | undefined;

/** The process-wide configuration, parsed on first use. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}

/** Forget the parsed configuration (the local server re-reads env it has just set). */
export function resetConfig(): void {
  cached = undefined;
}
