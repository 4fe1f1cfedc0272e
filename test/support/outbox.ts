import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { expect } from "vitest";
import { invitationCodeIn, newestMessageTo } from "#shared/adapters/local/outbox-mailer.ts";
import type { Client } from "./http.ts";
import type { TestService } from "./service.ts";

/** The newest e-mail sent to `email` in the local outbox and its invitation code (from the link). */
export function invitationFromOutbox(svc: TestService, email: string): { code: string; eml: string } {
  const eml = newestMessageTo(join(svc.service.deps.config.dataDir, "outbox"), email);
  if (!eml) throw new Error(`no e-mail to ${email}`);
  const code = invitationCodeIn(eml);
  if (!code) throw new Error("no code in e-mail");
  return { code, eml };
}

export interface JoinedMember {
  id: string;
  management_key: string;
  management_application_id: string;
}

/** An ADMIN member joined by invitation (from the local outbox): a second person of the tenant, with a key of their own. */
export async function joinMember(svc: TestService, api: Client, ownerKey: string): Promise<JoinedMember> {
  const email = `member-${randomUUID()}@example.com`;
  const invited = await api.post("/tenants/self/invitations", { key: ownerKey, body: { email } });
  expect(invited.status).toBe(201);
  const accepted = await api.post<JoinedMember>("/invitations/accept", {
    body: { code: invitationFromOutbox(svc, email).code },
  });
  expect(accepted.status).toBe(201);
  return accepted.body;
}
