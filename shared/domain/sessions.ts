import { randomBytes, randomUUID } from "node:crypto";
import { conflict, forbidden, notFound, validationError } from "#shared/domain/errors.ts";
import { hashKey, newApiKey } from "#shared/ids.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { SessionStore, StoredSession } from "#shared/ports/session-store.ts";
import type { ApplicationReader } from "#shared/ports/stores.ts";
import { type AccessRule, mayEverHold, ruleSetErrors } from "./access-rules.ts";
import { auditEvent } from "./audit-entry.ts";
import type { TenantPrincipal } from "./entities.ts";
import { disallowedPermissions, isTokenPermission, type Permission } from "./permissions.ts";

/** A session lives 3 minutes unless its authorization says otherwise (at most a day). */
export const SESSION_LIFETIME_SECONDS = 180;
export const MAX_SESSION_LIFETIME_SECONDS = 24 * 3600;

export interface SessionDeps {
  sessions: SessionStore;
  clock: Clock;
}

/** POST /sessions with a public (or private) application key: a key with no access yet, and its one-time nonce. */
export async function createSession(deps: SessionDeps, principal: TenantPrincipal) {
  if (principal.kind !== "application" || principal.application.type === "management")
    throw forbidden("Sessions are created with a public or private application key.");
  const now = deps.clock.now();
  const sessionKey = newApiKey("session");
  const nonce = randomBytes(24).toString("base64url");
  const session: StoredSession = {
    id: randomUUID(),
    tenant_id: principal.tenantId,
    state: "created",
    created_by: principal.application.id,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + SESSION_LIFETIME_SECONDS * 1000).toISOString(),
  };
  await deps.sessions.create(
    session,
    hashKey(sessionKey),
    hashKey(nonce),
    auditEvent(deps, principal, "session", session.id, "create", "Session created"),
  );
  return { session_key: sessionKey, nonce, expires_at: session.expires_at };
}

export interface AuthorizeInput {
  nonce: string;
  permissions: Permission[];
  rules: AccessRule[];
  expires_at?: string;
}

/**
 * POST /sessions/authorize with a private application key. The session gets the permissions and rules asked
 * for, each of which the authorizing application must itself hold; at access time the two are intersected.
 */
export async function authorizeSession(
  deps: SessionDeps & { applications: Pick<ApplicationReader, "getActive"> },
  principal: TenantPrincipal,
  input: AuthorizeInput,
): Promise<void> {
  if (principal.kind !== "application" || principal.application.type !== "private")
    throw forbidden("Sessions are authorized with a private application key.");
  if (input.permissions.length === 0 && input.rules.length === 0)
    throw validationError("Grant at least one permission or rule.", {
      permissions: ["permissions or rules must not both be empty"],
    });
  const errors: Record<string, string[]> = {};
  const refused = disallowedPermissions("private", input.permissions);
  if (refused.length) errors.permissions = refused.map((p) => `A session cannot hold ${p}.`);
  Object.assign(errors, ruleSetErrors(input.rules, { type: "private", allowConditions: true }));
  if (Object.keys(errors).length > 0) throw validationError("The session's access is invalid.", errors);
  const app = principal.application;
  const asked = [...input.permissions, ...input.rules.flatMap((r) => r.permissions)];
  const beyond = [...new Set(asked)].filter((p) => !mayEverHold(app, p));
  if (beyond.length) throw forbidden(`The authorizing application does not hold ${beyond.join(", ")}.`);

  const found = await deps.sessions.findByNonce(hashKey(input.nonce));
  if (!found || found.tenantId !== principal.tenantId) throw notFound("The nonce");
  const session = await deps.sessions.get(found.tenantId, found.sessionId);
  // A session lasts only while the application that created it does, with no deletion of it begun
  // (authentication refuses it after: ApplicationReader.getActive).
  if (!session || !(await deps.applications.getActive(session.tenant_id, session.created_by)))
    throw notFound("The nonce");
  const now = deps.clock.now();
  let expires_at = session.expires_at;
  if (input.expires_at !== undefined) {
    const at = Date.parse(input.expires_at);
    const latest = Date.parse(session.created_at) + MAX_SESSION_LIFETIME_SECONDS * 1000;
    if (Number.isNaN(at) || at <= now.getTime() || at > latest)
      throw validationError("expires_at is out of range.", {
        expires_at: [
          "must be an ISO 8601 time in the future, at most 24 hours after the session was created",
        ],
      });
    expires_at = new Date(at).toISOString();
  }
  const outcome = await deps.sessions.authorize(
    {
      ...session,
      state: "authorized",
      authorized_by: app.id,
      authorized_key_id: principal.keyId,
      authorized_at: now.toISOString(),
      permissions: [...new Set(input.permissions)],
      rules: input.rules,
      expires_at,
    },
    now,
    auditEvent(deps, principal, "session", session.id, "update", "Session authorized"),
  );
  if (outcome === "not-created") throw conflict("The session is already authorized.");
  if (outcome === "expired") throw notFound("The nonce");
}

/**
 * Whether a key is handed out beyond the tenant's back end: a public application's (in every visitor's page) or a
 * session's (a browser's), but not a sandbox run's service session. Such keys spend the browser sub-budget of
 * their tenant's rate budget (shared/http/middleware/rate-limit.ts).
 */
export const isHandedOut = (principal: TenantPrincipal): boolean =>
  (principal.kind === "session" && principal.session.service !== true) ||
  principal.application.type === "public";

/** Lifetime of the key a sandbox run uses for `svc` calls in AWS: the longest run plus a margin. */
export const SERVICE_SESSION_SECONDS = 300;

/**
 * A session holding exactly an application's token access, for one sandbox run's `svc` calls in AWS (the
 * runner reaches the API over HTTPS). It expires on its own; the key never enters the sandboxed code.
 */
export async function issueServiceSession(
  deps: SessionDeps,
  principal: TenantPrincipal,
  purpose: string,
  /**
   * The run was started by a handed-out caller (an open proxy's, a public or browser session key): its `svc`
   * calls spend the browser sub-budget as that caller does, so one cheap invocation cannot make the code spend
   * the back end's half (up to 1,000 calls a run, round 6).
   */
  forHandedOut = false,
): Promise<string> {
  const now = deps.clock.now();
  const app = principal.application;
  const sessionKey = newApiKey("session");
  const session: StoredSession = {
    id: randomUUID(),
    tenant_id: principal.tenantId,
    state: "authorized",
    created_by: app.id,
    created_at: now.toISOString(),
    authorized_by: app.id,
    authorized_at: now.toISOString(),
    permissions: app.permissions.filter(isTokenPermission),
    rules: app.rules,
    expires_at: new Date(now.getTime() + SERVICE_SESSION_SECONDS * 1000).toISOString(),
    ...(forHandedOut ? {} : { service: true as const }),
  };
  await deps.sessions.createAuthorized(
    session,
    hashKey(sessionKey),
    auditEvent(deps, principal, "session", session.id, "create", `Service session for ${purpose}`),
  );
  return sessionKey;
}
