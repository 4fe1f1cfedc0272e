import { createHash } from "node:crypto";
import type { Application, Principal } from "./entities.ts";
import { canonicalJson } from "./tokens/expression-filters.ts";

const grantOfApplication = (application: Application) => ({
  id: application.id,
  type: application.type,
  member_id: application.member_id ?? null,
  permissions: application.permissions,
  rules: application.rules,
});

/**
 * A short digest of everything that decides what a credential may do and see: its application's type,
 * permissions and access rules, and for a session also the session's own grant and whether it is authorized.
 * Any change gives another digest; names, timestamps and other fields that change nothing do not.
 * `undefined` for callers without a tenant grant (the root key, anonymous requests).
 */
export function grantVersionOf(principal: Principal | undefined): string | undefined {
  if (!principal || principal.kind === "root") return undefined;
  const grant =
    principal.kind === "session"
      ? {
          application: grantOfApplication(principal.application),
          session: {
            authorized: principal.session.authorized,
            permissions: principal.session.permissions,
            rules: principal.session.rules,
          },
        }
      : { application: grantOfApplication(principal.application) };
  return createHash("sha256").update(canonicalJson(grant), "utf8").digest("hex").slice(0, 32);
}
