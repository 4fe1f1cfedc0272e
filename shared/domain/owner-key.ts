import { forbidden } from "#shared/domain/errors.ts";
import type { MemberStore } from "#shared/ports/member-store.ts";
import type { TenantPrincipal } from "./entities.ts";

/**
 * 403 unless the caller is the OWNER member's own management key: what ends or re-keys the whole tenant (its
 * deletion, its KMS key) is the owner's alone, not an ADMIN's, an application's or a session's.
 */
export async function assertOwnerKey(
  members: Pick<MemberStore, "getMember">,
  principal: TenantPrincipal,
  action: string,
): Promise<void> {
  const refuse = () => forbidden(`Only the OWNER member's own management key may ${action}.`);
  const memberId = principal.kind === "application" ? principal.application.member_id : undefined;
  if (memberId === undefined) throw refuse();
  const member = await members.getMember(principal.tenantId, memberId);
  if (member?.role !== "OWNER") throw refuse();
}
