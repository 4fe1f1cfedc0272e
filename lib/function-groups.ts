import type { FunctionGroup } from "#shared/http/route.ts";
import type { TableAccess } from "./constructs/api-function.ts";
import type { SandboxAccess } from "./constructs/sandbox-runners.ts";

export interface GroupAccess {
  table: TableAccess;
  /** ssm:GetParameter on the root key hash parameter (root routes: POST /tenants, POST /_test/clock). */
  rootKeyParameter: boolean;
  /**
   * The deployment's receipt-signing key (SVC_RECEIPT_KEY_ID): `sign` for DELETE /tenants/self's receipt,
   * `publicKey` for the route that publishes the key to verify receipts with.
   */
  receiptKey?: "sign" | "publicKey";
  /** ses:SendEmail from the configured sender identity (invitations). */
  email?: boolean;
  /**
   * The tenants' sandbox runner functions (lib/constructs/sandbox-runners.ts): `prepare` creates one when
   * code is saved; `run` also invokes them (transforms, reactor code).
   */
  sandbox?: SandboxAccess;
  /** Why the group needs exactly this; shown in review, kept next to the grant. */
  reason: string;
}

/**
 * The one least-privilege table: what each function group may touch. `satisfies` makes a new group in
 * FUNCTION_GROUPS a compile error here until someone decides its access.
 */
export const FUNCTION_ACCESS = {
  system: {
    table: "nameOnly",
    rootKeyParameter: true,
    receiptKey: "publicKey",
    reason:
      "Health and OpenAPI read no data (the table name is set only because shared/config.ts requires it); " +
      "POST /_test/clock is a root route, so it checks the root key. /healthz checks the data key wraps and " +
      "unwraps a probe key: granted under the probe's encryption context only, never a tenant's.",
  },
  tenants: {
    table: "readWrite",
    rootKeyParameter: true,
    receiptKey: "sign",
    reason:
      "POST /tenants (root key) writes the tenant, its owner, app, key and audit entries in one transaction. Idempotent answers are sealed under answer keys (no data key: GROUP_DATA_KEYS). DELETE /tenants/self signs the deletion receipt; PUT /tenants/self/keys/kms re-wraps every stored key (ReEncrypt, never in plaintext).",
  },
  applications: {
    table: "readWrite",
    rootKeyParameter: false,
    reason:
      "Application and key CRUD with their audit entries; no root routes. Idempotent answers are sealed under answer keys (no data key).",
  },
  logs: {
    table: "read",
    rootKeyParameter: false,
    reason: "GET /logs and /logs/entity-types only query the audit log (and look up the caller's key).",
  },
  tokens: {
    table: "readWrite",
    rootKeyParameter: false,
    reason: "Token CRUD seals and opens data under per-tenant data keys from KMS, with audit entries.",
  },
  transactions: {
    table: "readWrite",
    rootKeyParameter: false,
    reason:
      "Opens, commits and rolls back token transactions; commits move sealed items and never open data. Idempotent answers are sealed under answer keys (no data key).",
  },
  sessions: {
    table: "readWrite",
    rootKeyParameter: false,
    reason:
      "Creates sessions (key, nonce, audit entry) and authorizes them. Idempotent answers are sealed under answer keys (no data key).",
  },
  members: {
    table: "readWrite",
    rootKeyParameter: false,
    email: true,
    reason:
      "Members and invitations; accepting one creates a member, its application and key; invitations send e-mail. Idempotent answers are sealed under answer keys (no data key).",
  },
  proxies: {
    table: "readWrite",
    rootKeyParameter: false,
    sandbox: "prepare",
    reason:
      "Proxy CRUD; each proxy's key is sealed under the tenant's data key so managers can read it back; " +
      "saving a transform creates the tenant's runner function (no invoke).",
  },
  proxy: {
    table: "readWrite",
    rootKeyParameter: false,
    sandbox: "run",
    reason:
      "Proxy invocation opens detokenized tokens (KMS Decrypt), logs each use, and answers transforms' svc calls; " +
      "transform code runs in the tenant's runner function, which holds no grant.",
  },
  reactors: {
    table: "readWrite",
    rootKeyParameter: false,
    sandbox: "run",
    reason:
      "Formula and reactor CRUD; react and react-async detokenize (KMS), runs code in the tenant's runner function (created when " +
      "a formula is saved), seals async jobs, their results and webhook secrets.",
  },
} as const satisfies Record<FunctionGroup, GroupAccess>;
