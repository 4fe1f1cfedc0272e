import { join } from "node:path";
import { invitationCodeIn, newestMessageTo } from "#shared/adapters/local/outbox-mailer.ts";
import type { TestService } from "./service.ts";

/** The newest e-mail sent to `email` in the local outbox and its invitation code (from the link). */
export function invitationFromOutbox(svc: TestService, email: string): { code: string; eml: string } {
  const eml = newestMessageTo(join(svc.service.deps.config.dataDir, "outbox"), email);
  if (!eml) throw new Error(`no e-mail to ${email}`);
  const code = invitationCodeIn(eml);
  if (!code) throw new Error("no code in e-mail");
  return { code, eml };
}
