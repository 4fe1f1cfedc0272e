import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SESv2Client, SendEmailCommand } from "@aws-sdk/client-sesv2";
import { mockClient } from "aws-sdk-client-mock";
import { describe, expect, it } from "vitest";
import { SesMailer } from "#shared/adapters/aws/ses-mailer.ts";
import { TestClock } from "#shared/adapters/clock.ts";
import { invitationCodeIn, newestMessageTo, OutboxMailer } from "#shared/adapters/local/outbox-mailer.ts";
import { isValidEmail } from "#shared/domain/email.ts";

describe("SesMailer", () => {
  it("sends a plain-text UTF-8 message from the configured sender", async () => {
    const ses = mockClient(SESv2Client);
    ses.on(SendEmailCommand).resolves({ MessageId: "m1" });

    await new SesMailer(new SESv2Client({ region: "us-east-1" }), "no-reply@example.com").send({
      to: "ada@example.com",
      subject: "Invitation ✓",
      text: "Hello",
    });

    expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input).toEqual({
      FromEmailAddress: "no-reply@example.com",
      Destination: { ToAddresses: ["ada@example.com"] },
      Content: {
        Simple: {
          Subject: { Data: "Invitation ✓", Charset: "UTF-8" },
          Body: { Text: { Data: "Hello", Charset: "UTF-8" } },
        },
      },
    });
    ses.restore();
  });
});

describe("OutboxMailer", () => {
  it("writes one RFC 5322 .eml file per message, private to the owner, with no header injection", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "outbox-")), "outbox");
    const mailer = new OutboxMailer(dir, "svc@localhost", new TestClock());

    await mailer.send({
      to: "ada@example.com",
      subject: "Hi\r\nBcc: evil@example.com",
      text: "line 1\nline 2",
    });

    const [file] = readdirSync(dir);
    const eml = readFileSync(join(dir, String(file)), "utf8");
    expect(file).toMatch(/\.eml$/);
    expect(statSync(join(dir, String(file))).mode & 0o777).toBe(0o600);
    expect(eml).toContain("Subject: Hi Bcc: evil@example.com\r\n");
    expect(eml).not.toMatch(/^Bcc:/m);
    expect(eml).toMatch(/\r\n\r\nline 1\r\nline 2\r\n$/);
    expect(eml).toMatch(/^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000\r$/m);
  });

  it("reads back the newest message to an address, and the invitation code of its link", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "outbox-")), "outbox");
    const clock = new TestClock();
    const mailer = new OutboxMailer(dir, "svc@localhost", clock);
    const link = (code: string) => `Join: https://vault.example/invitations/accept#code=${code}`;

    await mailer.send({ to: "ada@example.com", subject: "Invited", text: link("first") });
    clock.advance(1);
    await mailer.send({ to: "bob@example.com", subject: "Invited", text: link("other") });
    clock.advance(1);
    await mailer.send({ to: "ada@example.com", subject: "Invited", text: link("second%2Dcode") });

    const newest = newestMessageTo(dir, "ada@example.com");
    expect(invitationCodeIn(newest ?? "")).toBe("second-code");
    expect(newestMessageTo(dir, "eve@example.com")).toBeUndefined();
    expect(invitationCodeIn("no link here")).toBeUndefined();
  });
});

describe("isValidEmail", () => {
  it.each(["ada@example.com", "o'brien+tag@sub.example.co.uk", "用户@例子.广告"])("accepts %s", (email) => {
    expect(isValidEmail(email)).toBe(true);
  });

  it.each(["plain", "a@b", "Ada <ada@example.com>", "a@@b.com", " a@b.com", "a@b.com ", "", "a,b@c.com"])(
    "refuses %j",
    (email) => {
      expect(isValidEmail(email)).toBe(false);
    },
  );
});
