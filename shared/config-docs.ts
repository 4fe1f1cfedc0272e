import type { ConfigVariable } from "#shared/config.ts";
import { DEFAULT_RENDER_LIMITS } from "#shared/domain/tokens/render-limits.ts";
import { DEFAULT_OUTBOUND_LIMITS } from "#shared/sandbox/outbound-request.ts";

const MiB = 1024 * 1024;

/**
 * What each variable of shared/config.ts means, where it applies and who sets it: the one source of
 * docs/operations.md's configuration table (`npm run docs:env` rewrites it; a unit test fails until it is run).
 * The type makes a variable added to the schema without a line here a compile error.
 */
export interface VariableDoc {
  /** `local`, `aws` or `both`. */
  mode: "local" | "aws" | "both";
  /** Its value when unset, in words. */
  default: string;
  /** Who sets it: the operator (you), `npm start`, the CDK stack, Lambda itself. */
  setBy: string;
  meaning: string;
}

const STACK = "the stack";
const YOU = "you";

export const CONFIG_DOCS: Record<ConfigVariable, VariableDoc> = {
  SVC_MODE: {
    mode: "both",
    default: "`aws` when `AWS_LAMBDA_FUNCTION_NAME` is set, else `local`",
    setBy: STACK,
    meaning:
      "`aws`: KMS, SSM, SQS, SES and the runner functions; `local`: the master key file, outbox and child processes",
  },
  AWS_LAMBDA_FUNCTION_NAME: {
    mode: "aws",
    default: "unset",
    setBy: "Lambda",
    meaning: "its presence selects AWS mode when `SVC_MODE` is unset",
  },
  AWS_REGION: {
    mode: "both",
    default: "`us-east-1`",
    setBy: "Lambda",
    meaning: "region of every AWS client",
  },
  SVC_TABLE_NAME: {
    mode: "both",
    default: "`svc-vault` locally; required in AWS",
    setBy: STACK,
    meaning: "the DynamoDB table",
  },
  SVC_DYNAMODB_ENDPOINT: {
    mode: "both",
    default: "DynamoDB Local started by `npm start`; the region's endpoint in AWS",
    setBy: YOU,
    meaning: "any other DynamoDB endpoint (LocalStack, a container, a real region's endpoint)",
  },
  SVC_DATA_DIR: {
    mode: "local",
    default: "`.svc-data/`",
    setBy: YOU,
    meaning:
      "DynamoDB Local files (`dynamodb/`), the generated root key (`root-key`, mode 600), the outbox and dead letters",
  },
  SVC_ROOT_KEY: {
    mode: "local",
    default: "generated on first start",
    setBy: YOU,
    meaning: "the operator key for `POST /tenants`; refused in AWS mode",
  },
  SVC_ROOT_KEY_HASH: {
    mode: "both",
    default: "unset",
    setBy: YOU,
    meaning: "the root key's SHA-256 (hex) instead of the key itself (tests, SAM)",
  },
  SVC_ROOT_KEY_PARAMETER: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning:
      "SSM SecureString parameter holding the root key's SHA-256 (hex); only on functions serving root routes",
  },
  SVC_KMS_KEY_ID: {
    mode: "aws",
    default: "unset (locally the master key file is used)",
    setBy: STACK,
    meaning: "the KMS key that wraps the tenants' data keys",
  },
  SVC_MASTER_KEY_FILE: {
    mode: "local",
    default:
      "`$XDG_CONFIG_HOME/svc-vault/<data dir name>-<hash of its path>.master.key` (`~/.config/…`), outside the data directory",
    setBy: YOU,
    meaning:
      "the master key that wraps the data keys (mode 600); checked against the data's key check value at start: a missing or other key refuses to start, naming the file ([backups](#backups-and-the-master-key))",
  },
  SVC_LOCAL_KMS_DIR: {
    mode: "local",
    default: "`<SVC_MASTER_KEY_FILE>.customer-keys/`",
    setBy: YOU,
    meaning:
      "local stand-ins for tenants' own KMS keys: `arn:aws:kms:local:000000000000:key/<name>` is `<name>.key` here (32 bytes, base64), disabled while `<name>.disabled` exists ([bring your own key](security.md#bring-your-own-key))",
  },
  SVC_RECEIPT_KEY_ID: {
    mode: "aws",
    default: "unset (locally an Ed25519 key derived from the master key)",
    setBy: STACK,
    meaning:
      "the asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY) that signs tenant deletion receipts; set by the construct (its receipt key); unset, `DELETE /tenants/self` answers 503",
  },
  SVC_EMAIL_SENDER: {
    mode: "both",
    default: "`svc-vault@localhost`; prop `emailSender` in AWS (context `emailSender` in this app)",
    setBy: STACK,
    meaning: "invitation sender; in AWS a verified SES identity",
  },
  SVC_RUNNER_PREFIX: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning:
      "with every other `SVC_RUNNER_*` and `SVC_STACK_NAME` (all or none): how the tenants' runner functions are named and created (see [Sandbox runner functions](#sandbox-runner-functions)); required in AWS mode unless `SVC_SANDBOX=none`",
  },
  SVC_RUNNER_ROLE_ARN: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the runners' execution role (grants nothing)",
  },
  SVC_RUNNER_CODE_BUCKET: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the runner bundle's S3 bucket",
  },
  SVC_RUNNER_CODE_KEY: { mode: "aws", default: "unset", setBy: STACK, meaning: "the runner bundle's S3 key" },
  SVC_RUNNER_RUNTIME: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the runners' runtime (`nodejs24.x`)",
  },
  SVC_RUNNER_HANDLER: { mode: "aws", default: "unset", setBy: STACK, meaning: "the runners' handler" },
  SVC_RUNNER_MEMORY_MB: { mode: "aws", default: "unset", setBy: STACK, meaning: "the runners' memory" },
  SVC_RUNNER_TIMEOUT_SECONDS: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the runners' timeout",
  },
  SVC_RUNNER_ARCHITECTURE: { mode: "aws", default: "unset", setBy: STACK, meaning: "`arm64` or `x86_64`" },
  SVC_RUNNER_LOG_GROUP: { mode: "aws", default: "unset", setBy: STACK, meaning: "the runners' log group" },
  SVC_STACK_NAME: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "tags the runner functions with their stack",
  },
  SVC_SANDBOX: {
    mode: "both",
    default: "`process` locally, `runner` in AWS",
    setBy: STACK,
    meaning:
      "where tenant code runs: `process` (local child processes; refused in AWS mode), `runner` (the tenant's runner function; needs `SVC_RUNNER_*`), `none` (this function runs no tenant code: every run is refused). The stack sets `none` on functions without runner access",
  },
  SVC_CALLBACK_QUEUE_URL: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the SQS queue of asynchronous reactions (reactors function and callback consumer)",
  },
  SVC_CALLBACK_DLQ_URL: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the callback consumer moves a job that no retry can fix here at once",
  },
  SVC_REWRAP_QUEUE_URL: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the SQS queue of key rewrap pages (tenants function sends, the rewrap worker consumes)",
  },
  SVC_SYNC_REACT_TIMEOUT_MS: {
    mode: "both",
    default: "`20000`",
    setBy: YOU,
    meaning: "longest synchronous react run (100–25000; 504 past it)",
  },
  SVC_CALLBACK_RETRY_BASE_SECONDS: {
    mode: "local",
    default: "`60`",
    setBy: YOU,
    meaning:
      "first retry delay of a failed reactor callback (doubling, 5 attempts, then `<data dir>/dead-letters/`)",
  },
  SVC_API_URL: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "the API URL the runners' `svc` calls use",
  },
  SVC_INVITATION_URL: {
    mode: "both",
    default: "`http://127.0.0.1:$PORT/invitations/accept`; the API's in AWS",
    setBy: STACK,
    meaning:
      "where invitation e-mail links point, the code in the fragment (`#code=`); the default is the API's own accept page",
  },
  PORT: {
    mode: "local",
    default: "`3000`",
    setBy: YOU,
    meaning: "the port the API listens on (127.0.0.1 only; DynamoDB Local too, see below)",
  },
  SVC_TEST_CLOCK: {
    mode: "local",
    default: "off",
    setBy: YOU,
    meaning: '`1`: `POST /_test/clock {"advance_seconds": n}` (root key) moves "now"; refused in AWS mode',
  },
  SVC_PROXY_ALLOW_PRIVATE: {
    mode: "both",
    default: "off (locally too)",
    setBy: YOU,
    meaning:
      "`1`: lets proxies, callbacks and code's `fetch` (local pool only; never the AWS runners) reach loopback/private addresses and use plain http; DynamoDB's endpoint, the API's own port and link-local/metadata addresses stay refused",
  },
  SVC_LOG_RETENTION_DAYS: {
    mode: "both",
    default: "`365`",
    setBy: "you (in AWS: prop `auditLogRetentionDays`)",
    meaning: "audit log retention: entries carry a TTL this many days after creation",
  },
  SVC_AUTH_CACHE_SECONDS: {
    mode: "both",
    default: "`5`",
    setBy: "you (in AWS: prop `authCacheSeconds`)",
    meaning:
      "how long a process may keep a resolved API or proxy key (0–60): the upper bound on revocation delay",
  },
  SVC_SANDBOX_PROCESSES: {
    mode: "local",
    default: "`16`",
    setBy: YOU,
    meaning:
      "sandbox pool: most child processes alive at once, the blank spare included (2–256; about 60 MB each)",
  },
  SVC_SANDBOX_TENANT_PROCESSES: {
    mode: "local",
    default: "no cap",
    setBy: YOU,
    meaning:
      "sandbox pool: most processes one tenant may keep busy, below its fair share ([sandbox.md](sandbox.md#fair-share))",
  },
  SVC_SANDBOX_FETCH_MAX_REQUESTS: {
    mode: "both",
    default: `\`${DEFAULT_OUTBOUND_LIMITS.maxRequests}\``,
    setBy: YOU,
    meaning:
      "requests (redirects included) one run of tenant code may send with `fetch`; locally applied by the pool, in AWS sent with each run ([sandbox.md](sandbox.md#outbound-http-fetch))",
  },
  SVC_SANDBOX_FETCH_MAX_BYTES_OUT: {
    mode: "both",
    default: `${DEFAULT_OUTBOUND_LIMITS.maxBytesOut / MiB} MiB`,
    setBy: YOU,
    meaning: "request body bytes one run may send with `fetch`",
  },
  SVC_SANDBOX_FETCH_MAX_BYTES_IN: {
    mode: "both",
    default: `${DEFAULT_OUTBOUND_LIMITS.maxBytesIn / MiB} MiB`,
    setBy: YOU,
    meaning: "response body bytes one run may receive with `fetch`",
  },
  SVC_SANDBOX_FETCH_TIMEOUT_MS: {
    mode: "both",
    default: `\`${DEFAULT_OUTBOUND_LIMITS.timeoutMs}\``,
    setBy: YOU,
    meaning: "one `fetch` request's time (cut before the run's deadline)",
  },
  SVC_MAX_BODY_BYTES: {
    mode: "both",
    default: "`1048576`",
    setBy: YOU,
    meaning: "largest request body (413 above)",
  },
  SVC_RATE_LIMIT_PER_SECOND: {
    mode: "both",
    default: "`1000`",
    setBy: "you (in AWS: prop `rateLimit.perSecond`)",
    meaning:
      "sustained requests per second per tenant, and per source address on routes without a key; `0` turns limits off; fractions allowed (`0.5`); see [Rate limits](#rate-limits)",
  },
  SVC_RATE_LIMIT_BURST: {
    mode: "both",
    default: "10 × the rate",
    setBy: "you (in AWS: prop `rateLimit.burst`)",
    meaning:
      "requests a bucket may spend per window, at least 2 (keys handed out spend half of it); a window lasts burst ÷ rate seconds (at least 1 s)",
  },
  SVC_EXPRESSION_REQUEST_MS: {
    mode: "both",
    default: `\`${DEFAULT_RENDER_LIMITS.requestMs}\``,
    setBy: YOU,
    meaning:
      "CPU time of all the expression renders of one request together (masks, fingerprints, search indexes, ids, detokenization filters; each render at most 100 ms); see [expressions.md](expressions.md#render-budgets)",
  },
  SVC_EXPRESSION_TENANT_MS_PER_SECOND: {
    mode: "both",
    default: `\`${DEFAULT_RENDER_LIMITS.tenantMsPerSecond}\``,
    setBy: YOU,
    meaning:
      "a tenant's sustained share of a process's render time (ms per second of the service clock); `0` keeps no share; spent: `429` with `Retry-After`",
  },
  SVC_EXPRESSION_TENANT_BURST_MS: {
    mode: "both",
    default: `\`${DEFAULT_RENDER_LIMITS.tenantBurstMs}\``,
    setBy: YOU,
    meaning: "render time a tenant may spend at once before its share limits it",
  },
  SVC_SHUTDOWN_GRACE_SECONDS: {
    mode: "local",
    default: "`10`",
    setBy: YOU,
    meaning:
      "on SIGTERM/SIGINT, how long requests in flight may finish before the rest is cut (0–600; [Stopping](#stopping))",
  },
};

/** Read by libraries rather than shared/config.ts, listed in the same table. */
export const LIBRARY_VARIABLES: Record<string, VariableDoc> = {
  LOG_LEVEL: {
    mode: "both",
    default: "`INFO`",
    setBy: STACK,
    meaning: "structured JSON logs (Powertools Logger); `SILENT` in tests",
  },
  POWERTOOLS_SERVICE_NAME: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning:
      "the function's group (`tokens`, `proxy`, `sweep`…); the service's own logs, traces and metrics name `svc-vault` (their `service`) whatever it says",
  },
  POWERTOOLS_METRICS_NAMESPACE: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning:
      "CloudWatch namespace of the service's metrics: prop `metricsNamespace`, default `svc-vault/<name>` from the construct's path",
  },
  NODE_OPTIONS: {
    mode: "aws",
    default: "unset",
    setBy: STACK,
    meaning: "`--enable-source-maps --disable-proto=throw` (see [Node.js flags](#nodejs-flags))",
  },
};

/** docs/operations.md's configuration table, one row per variable. */
export function renderConfigTable(): string {
  const rows = Object.entries({ ...CONFIG_DOCS, ...LIBRARY_VARIABLES }).map(
    ([name, doc]) => `| \`${name}\` | ${doc.mode} | ${doc.default} | ${doc.setBy} | ${doc.meaning} |`,
  );
  return [
    "| variable | mode | default | set by | meaning |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

const BEGIN = "<!-- config:begin (npm run docs:env writes this table from shared/config-docs.ts) -->";
const END = "<!-- config:end -->";

/** `markdown` with the table between its markers rewritten. */
export function replaceConfigTable(markdown: string): string {
  const start = markdown.indexOf(BEGIN);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the markers ${BEGIN} … ${END} are missing`);
  return `${markdown.slice(0, start + BEGIN.length)}\n${renderConfigTable()}\n${markdown.slice(end)}`;
}
