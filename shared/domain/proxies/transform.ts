/**
 * Running a proxy's request or response transform: tenant code in the sandbox, acting as the proxy's configured
 * application, with a generic failure for the caller (the code's own message may hold detokenized data).
 */
import { type ActingDeps, configuredApplication, sandboxSvc } from "#shared/domain/acting-application.ts";
import type { Authenticator } from "#shared/domain/authentication.ts";
import { readableMessage } from "#shared/domain/code-messages.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";
import type { StoredProxy } from "./proxy.ts";
import { ProxyError } from "./proxy-error.ts";

/** With a transform configured, a proxied payload may be at most 5 MB (spec). */
export const TRANSFORM_PAYLOAD_LIMIT = 5 * 1024 * 1024;
export const TRANSFORM_TIMEOUT_MS = 5_000;
export const TRANSFORM_FAILED = "The proxy transform failed. Quote the request id when reporting it.";

export interface TransformDeps extends ActingDeps {
  authenticator: Pick<Authenticator, "application" | "keyHolder">;
  sandbox: Sandbox;
}

export async function runTransform(
  deps: TransformDeps,
  proxy: StoredProxy,
  code: string,
  input: unknown,
  /** Invoked by a handed-out caller (an open proxy's, a browser-held key): its svc calls spend as it does. */
  handedOut = false,
  options: { parseArgsBody?: boolean } = {},
): Promise<{ body?: unknown; headers?: unknown }> {
  const svcPrincipal = await configuredApplication(
    deps.authenticator,
    proxy.tenant_id,
    proxy.application_id,
    "proxy",
    [proxy.modified_by ?? proxy.created_by],
  );
  const result = await deps.sandbox.run({
    tenantId: proxy.tenant_id,
    code,
    input,
    ...(options.parseArgsBody ? { parseArgsBody: true } : {}),
    timeoutMs: TRANSFORM_TIMEOUT_MS,
    ...(proxy.allowed_hosts ? { allowedHosts: proxy.allowed_hosts } : {}),
    ...sandboxSvc(deps, svcPrincipal, `proxy ${proxy.id}`, handedOut),
  });
  if (!result.ok) {
    // Generic, with the request id added by the handler: the message is tenant code's, may hold detokenized
    // data, and a caller of a proxy without require_auth is anyone. It is not logged either.
    if (result.error.kind === "timeout")
      throw new ProxyError("timed-out", "The proxy transform timed out.", {
        code: "transform-timeout",
        title: "Transform Failed",
      });
    const failed = new ProxyError("failed", TRANSFORM_FAILED, {
      code: "transform-failed",
      title: "Transform Failed",
    });
    failed.transformFailure = {
      name: (result.error.name ?? result.error.kind).slice(0, 200),
      message: readableMessage(result.error.message),
    };
    throw failed;
  }
  const value = result.value;
  if (typeof value !== "object" || value === null)
    throw new ProxyError("failed", "A transform must return an object with body and headers.", {
      code: "transform-invalid",
      title: "Transform Failed",
    });
  return value as { body?: unknown; headers?: unknown };
}

export function encodeBody(body: unknown): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  return Buffer.from(JSON.stringify(body), "utf8");
}
