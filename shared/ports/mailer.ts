export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends e-mail: SES v2 in AWS, RFC 5322 files in <data dir>/outbox/ locally. */
export interface Mailer {
  send(message: EmailMessage): Promise<void>;
}
