import type { Authenticator } from "#shared/domain/authentication.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { validationError } from "#shared/domain/errors.ts";
import { ceilingOf, widerThan } from "#shared/domain/grant-ceiling.ts";
import { issueServiceSession, type SessionDeps } from "#shared/domain/sessions.ts";
import { createToken } from "#shared/domain/tokens/create.ts";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { deleteToken, getToken, patchToken } from "#shared/domain/tokens/manage.ts";
import type { SvcOperation } from "#shared/ports/sandbox.ts";
import { createTokenBody, patchTokenBody } from "#shared/schemas/tokens.ts";

/**
 * `req.svc` inside transforms and reactors: calls answered here, in the host, as the configured application.
 * The sandbox never holds a key; inputs are validated as the HTTP API would.
 */
export function svcCallHandler(deps: TokenDeps, principal: TenantPrincipal) {
  // A DomainError thrown here reaches the code as the HTTP API would answer it (status and detail only:
  // shared/sandbox/svc-bridge.ts).
  return async (op: SvcOperation, args: unknown[]): Promise<unknown> => {
    switch (op) {
      case "tokens.create": {
        const parsed = createTokenBody.safeParse(args[0]);
        if (!parsed.success) throw validationError("The token is invalid.");
        return await createToken(deps, principal, parsed.data);
      }
      case "tokens.retrieve":
        return await getToken(deps, principal, String(args[0]));
      case "tokens.update": {
        const parsed = patchTokenBody.safeParse(args[1]);
        if (!parsed.success) throw validationError("The patch is invalid.");
        return await patchToken(deps, principal, String(args[0]), parsed.data);
      }
      case "tokens.delete":
        await deleteToken(deps, principal, String(args[0]));
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

export function sandboxSvc(deps: ActingDeps, principal: TenantPrincipal | undefined, purpose: string) {
  if (!principal) return {};
  return {
    // Logged as the application's, saying which code ran them (audit-entry.ts auditContext).
    onSvcCall: svcCallHandler({ ...deps, auditContext: `the code of ${purpose}` }, principal),
    issueSvcKey: () => issueServiceSession(deps, principal, purpose),
  };
}
