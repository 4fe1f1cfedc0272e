import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestService } from "./service.ts";

/** The newest e-mail sent to `email` in the local outbox and its invitation code (from the link). */
export function invitationFromOutbox(svc: TestService, email: string): { code: string; eml: string } {
  const outbox = join(svc.service.deps.config.dataDir, "outbox");
  const eml = readdirSync(outbox)
    .sort()
    .map((f) => readFileSync(join(outbox, f), "utf8"))
    .filter((m) => m.includes(`To: <${email}>`))
    .at(-1);
  if (!eml) throw new Error(`no e-mail to ${email}`);
  const code = /[?#]code=([A-Za-z0-9_%-]+)/.exec(eml)?.[1];
  if (!code) throw new Error("no code in e-mail");
  return { code: decodeURIComponent(code), eml };
}
