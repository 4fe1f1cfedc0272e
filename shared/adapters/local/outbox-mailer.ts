import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Clock } from "#shared/ports/clock.ts";
import type { EmailMessage, Mailer } from "#shared/ports/mailer.ts";

/** RFC 5322 date: "Sun, 22 Nov 2026 12:00:00 +0000". */
function rfc5322Date(date: Date): string {
  return date.toUTCString().replace("GMT", "+0000");
}

/** Header values are single lines; anything else would let a value inject headers. */
function headerValue(value: string): string {
  return value.replace(/[\r\n]+/g, " ");
}

/** Local mail: each message becomes an .eml file under <data dir>/outbox/, readable by any mail client. */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly directory: string,
    private readonly sender: string,
    private readonly clock: Clock,
  ) {}

  async send(message: EmailMessage): Promise<void> {
    const now = this.clock.now();
    const id = randomUUID();
    const lines = [
      `From: svc-vault <${headerValue(this.sender)}>`,
      `To: <${headerValue(message.to)}>`,
      `Subject: ${headerValue(message.subject)}`,
      `Date: ${rfc5322Date(now)}`,
      `Message-ID: <${id}@svc-vault.local>`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: 8bit",
      "",
      ...message.text.split(/\r?\n/),
    ];
    await mkdir(this.directory, { recursive: true });
    const file = join(this.directory, `${now.toISOString().replace(/[:.]/g, "-")}-${id}.eml`);
    await writeFile(file, `${lines.join("\r\n")}\r\n`, { mode: 0o600 });
  }
}

/** The newest message an outbox directory holds for `to` (its whole .eml text), if any: for tests and tools. */
export function newestMessageTo(directory: string, to: string): string | undefined {
  return readdirSync(directory)
    .sort()
    .map((file) => readFileSync(join(directory, file), "utf8"))
    .filter((message) => message.includes(`To: <${headerValue(to)}>`))
    .at(-1);
}

/** The invitation code of an invitation e-mail, from its link (`#code=…`, or `?code=…` in older links). */
export function invitationCodeIn(message: string): string | undefined {
  const code = /[?#]code=([A-Za-z0-9_%-]+)/.exec(message)?.[1];
  return code === undefined ? undefined : decodeURIComponent(code);
}
