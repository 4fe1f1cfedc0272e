import type { Authenticator } from "#shared/domain/authentication.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { forbidden, validationError } from "#shared/domain/errors.ts";
import { ceilingOf, widerThan } from "#shared/domain/grant-ceiling.ts";
import { grantVersionOf } from "#shared/domain/grant-version.ts";
import { issueServiceSession, type SessionDeps } from "#shared/domain/sessions.ts";
import { createToken } from "#shared/domain/tokens/create.ts";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { deleteToken, getToken, patchToken } from "#shared/domain/tokens/manage.ts";
import type { SvcOperation } from "#shared/ports/sandbox.ts";
import { idString } from "#shared/schemas/common.ts";
import { createTokenBody, patchTokenBody } from "#shared/schemas/tokens.ts";

/**
 * `req.svc` inside transforms and reactors: calls answered here, in the host, as the configured application.
 * The sandbox never holds a key; inputs are validated as the HTTP API would.
 */
export function svcCallHandler(deps: TokenDeps, principal: TenantPrincipal) {
  // A DomainError thrown here reaches the code as the HTTP API would answer it (status and detail only:
  // shared/sandbox/svc-bridge.ts).
  return async (op: SvcOperation, args: unknown[]): Promise<unknown> => {
    // The id as the HTTP API's path takes it (idString: 400 characters, 900 bytes): the code's arguments may be
    // megabytes, and an id no token can have was handed to the store as a key (serialised, signed and sent).
    const id = op === "tokens.create" ? "" : String(args[0]);
    if (op !== "tokens.create" && !idString.safeParse(id).success)
      throw validationError("The token id is invalid.", {
        id: ["must be 1 to 400 characters and at most 900 bytes of UTF-8"],
      });
    switch (op) {
      case "tokens.create": {
        const parsed = createTokenBody.safeParse(args[0]);
        if (!parsed.success) throw validationError("The token is invalid.");
        return await createToken(deps, principal, parsed.data);
      }
      case "tokens.retrieve":
        return await getToken(deps, principal, id);
      case "tokens.update": {
        const parsed = patchTokenBody.safeParse(args[1]);
        if (!parsed.success) throw validationError("The patch is invalid.");
        return await patchToken(deps, principal, id, parsed.data);
      }
      case "tokens.delete":
        await deleteToken(deps, principal, id);
        return null;
      default:
        throw validationError(`Unknown svc operation ${op}`);
    }
  };
}

/**
 * The principal a configured application acts as (proxy transforms, reactors), or undefined without one.
 * Looked up through the Authenticator's cache, so a warm call reads no application from the table.
 *
 * `configuredBy` names the applications whose keys last changed what runs (a proxy's or reactor's last
 * writer, a formula changed since): each must still cover the application (grant-ceiling.ts), or nothing is
 * acted as. Saving already requires that; this also holds for configurations saved before that rule, and
 * after the configurer was narrowed or removed (a deleted member's proxies stop acting as their application).
 */
export async function configuredApplication(
  applications: Pick<Authenticator, "application">,
  tenantId: string,
  applicationId: string | undefined,
  keyId: string,
  configuredBy: (string | undefined)[] = [],
): Promise<TenantPrincipal | undefined> {
  if (!applicationId) return undefined;
  const application = await applications.application(tenantId, applicationId);
  if (!application) return undefined;
  for (const id of new Set(configuredBy)) {
    const configurer = id === undefined ? undefined : await applications.application(tenantId, id);
    if (!configurer) return undefined;
    const ceiling = ceilingOf({ kind: "application", tenantId, keyId, application: configurer });
    if (ceiling && widerThan(ceiling, application).length > 0) return undefined;
  }
  return { kind: "application", tenantId, keyId, application };
}

/**
 * The `svc` half of a sandbox request for `principal`: answered in this process locally, and in AWS through
 * the API with a short-lived session key holding exactly that application's access. Nothing without one.
 */
/** What code acting as an application needs: the token use cases, and sessions for its svc key. */
export type ActingDeps = TokenDeps & SessionDeps;

export function sandboxSvc(
  deps: ActingDeps & { authenticator: Pick<Authenticator, "application" | "keyHolder"> },
  principal: TenantPrincipal | undefined,
  purpose: string,
  /** The run's invoker was a handed-out key (issueServiceSession's `forHandedOut`). */
  invokedByHandedOut = false,
) {
  if (!principal) return {};
  // Logged as the application's, saying which code ran them (audit-entry.ts auditContext).
  const answer = svcCallHandler({ ...deps, auditContext: `the code of ${purpose}` }, principal);
  const version = grantVersionOf(principal);
  return {
    // Each call is answered only while the application still exists with the access the run started with
    // (looked up through the Authenticator's cache, evicted when it changes): a run lasts up to 210 s, and a
    // deleted or narrowed application's svc calls went on answering for all of it while its keys got 401.
    onSvcCall: async (op: SvcOperation, args: unknown[]) => {
      if (principal.kind === "application") {
        const now = await deps.authenticator.application(principal.tenantId, principal.application.id);
        if (!now || grantVersionOf({ ...principal, application: now }) !== version)
          throw forbidden("The application this code acts as has changed or was deleted.");
      }
      return answer(op, args);
    },
    issueSvcKey: () => issueServiceSession(deps, principal, purpose, invokedByHandedOut),
  };
}
