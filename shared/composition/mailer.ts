import { join } from "node:path";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { SesMailer } from "#shared/adapters/aws/ses-mailer.ts";
import { OutboxMailer } from "#shared/adapters/local/outbox-mailer.ts";
import type { Mailer } from "#shared/ports/mailer.ts";
import { traced } from "#shared/tracer.ts";
import type { Table } from "./table.ts";

/** Invitations' e-mail: SES in AWS; locally .eml files under <data dir>/outbox/. */
export function mailer({ config, clock }: Table): { mailer: Mailer } {
  return {
    mailer:
      config.mode === "aws"
        ? new SesMailer(traced(new SESv2Client({ region: config.region })), config.emailSender)
        : new OutboxMailer(join(config.dataDir, "outbox"), config.emailSender, clock),
  };
}
