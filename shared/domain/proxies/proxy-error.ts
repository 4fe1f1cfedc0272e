import type { Authenticator } from "#shared/domain/authentication.ts";
import { DomainError } from "#shared/domain/errors.ts";
import { ceilingOf } from "#shared/domain/grant-ceiling.ts";
import type { StoredProxy } from "./proxy.ts";

/** A failure of the proxy itself (not of the destination): answered as `{proxy_error: problem}`. */
export class ProxyError extends DomainError {
  /** A transform's own failure (tenant code's message, readable): shown only to a member (memberView). */
  transformFailure?: { name: string; message: string };
}

/**
 * The generic transform failure with its message, for a caller who could read it anyway: a member's own key of
 * the proxy's tenant, which may rewrite the transform to answer whatever it sees (docs/proxies.md, "Transforms").
 */
export async function memberView(
  deps: { authenticator: Pick<Authenticator, "authenticate"> },
  proxy: StoredProxy,
  apiKey: string | undefined,
  error: ProxyError,
): Promise<ProxyError> {
  const failure = error.transformFailure;
  if (failure === undefined || apiKey === undefined) return error;
  const caller = await deps.authenticator.authenticate(apiKey, { rootAllowed: false }).catch(() => undefined);
  if (
    !caller ||
    caller.kind === "root" ||
    caller.tenantId !== proxy.tenant_id ||
    ceilingOf(caller) !== undefined
  )
    return error;
  const detail = `${error.detail} ${failure.name}: ${failure.message}`;
  return new ProxyError(error.kind, detail, { ...error.options(), errors: { error: [failure.message] } });
}

/** A DomainError as the proxy's own failure; anything else (a bug, a store outage) as it is. */
export function asProxyFailure(error: unknown): unknown {
  if (error instanceof ProxyError || !(error instanceof DomainError)) return error;
  return new ProxyError(error.kind, error.detail, error.options());
}
