import { type SESv2Client, SendEmailCommand } from "@aws-sdk/client-sesv2";
import type { EmailMessage, Mailer } from "#shared/ports/mailer.ts";

/** Mail through SES v2 from the sender the stack configures. */
export class SesMailer implements Mailer {
  constructor(
    private readonly ses: SESv2Client,
    private readonly sender: string,
  ) {}

  async send(message: EmailMessage): Promise<void> {
    await this.ses.send(
      new SendEmailCommand({
        FromEmailAddress: this.sender,
        Destination: { ToAddresses: [message.to] },
        Content: {
          Simple: {
            Subject: { Data: message.subject, Charset: "UTF-8" },
            Body: { Text: { Data: message.text, Charset: "UTF-8" } },
          },
        },
      }),
    );
  }
}
