import { randomBytes } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { CallbackJob } from "#shared/domain/reactors/callback-job.ts";
import {
  callbackUrlProblem,
  DeliveryError,
  isRetryable,
  MAX_ATTEMPTS,
  MAX_RETRY_DELAY_SECONDS,
  parseCallbackJob,
  retryDelaySeconds,
  signWebhook,
  webhookPayload,
} from "#shared/domain/reactors/callbacks.ts";
import { nodeEgress } from "#shared/egress/egress.ts";

const secret = `whsec_${randomBytes(32).toString("base64")}`;

const job: CallbackJob = {
  requestId: "0194f5a0-0000-7000-8000-000000000001",
  tenantId: "tenant-1",
  reactorId: "reactor-1",
  callbackUrl: "https://hooks.example/receive?sig=abc",
  timeoutMs: 10_000,
  sealedArgs: "sealed",
  actor: { type: "application", id: "app-1" },
  enqueuedAt: "2026-01-01T00:00:00.000Z",
};

describe("retryDelaySeconds", () => {
  it("doubles from the base after each failed attempt and is capped at 15 minutes", () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelaySeconds(attempt))).toEqual([60, 120, 240, 480]);
    expect(retryDelaySeconds(5)).toBe(900);
    expect(retryDelaySeconds(50)).toBe(MAX_RETRY_DELAY_SECONDS);
    expect([1, 2, 3, 4].map((attempt) => retryDelaySeconds(attempt, 0.05))).toEqual([0.05, 0.1, 0.2, 0.4]);
    expect(retryDelaySeconds(0, 10)).toBe(10);
  });

  it("retries a job five times in all", () => {
    expect(MAX_ATTEMPTS).toBe(5);
  });
});

describe("webhook payload and signature", () => {
  it("wraps a successful outcome as reactor.reaction.completed", () => {
    const at = new Date("2026-03-01T12:00:00.000Z");
    expect(webhookPayload(job, { status: 200, body: { raw: { ok: true } } }, at)).toEqual({
      type: "reactor.reaction.completed",
      timestamp: "2026-03-01T12:00:00.000Z",
      data: {
        request_id: job.requestId,
        reactor_id: "reactor-1",
        callback_url: job.callbackUrl,
        status: 200,
        body: { raw: { ok: true } },
      },
    });
  });

  it("wraps an error outcome as reactor.reaction.failed with its problem body", () => {
    const problem = { type: "x", title: "Bad Request", status: 400, detail: "missing" };
    const payload = webhookPayload(job, { status: 400, body: problem }, new Date());
    expect(payload.type).toBe("reactor.reaction.failed");
    expect(payload.data).toEqual({
      request_id: job.requestId,
      reactor_id: "reactor-1",
      callback_url: job.callbackUrl,
      status: 400,
      body: problem,
    });
  });

  it("signs per Standard Webhooks: the receiver's verify accepts it, and refuses a changed body or secret", () => {
    const at = new Date();
    const body = JSON.stringify(webhookPayload(job, { status: 200, body: { raw: 1 } }, at));
    const headers = signWebhook(secret, job.requestId, at, body);

    expect(headers["webhook-id"]).toBe(job.requestId);
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    // The destination is signed: an event sent elsewhere, re-addressed to this receiver, no longer verifies.
    const readdressed = body.replace(
      JSON.stringify(job.callbackUrl),
      JSON.stringify("https://tenant.example/hook"),
    );
    expect(readdressed).not.toBe(body);
    expect(() => new Webhook(secret).verify(readdressed, { ...headers })).toThrow();

    expect(() => new Webhook(secret).verify(body.replace('"raw":1', '"raw":2'), { ...headers })).toThrow(
      WebhookVerificationError,
    );
    const other = `whsec_${randomBytes(32).toString("base64")}`;
    expect(() => new Webhook(other).verify(body, { ...headers })).toThrow(WebhookVerificationError);
  });
});

describe("parseCallbackJob", () => {
  it("round-trips a job", () => {
    expect(parseCallbackJob(JSON.stringify(job))).toEqual(job);
    const operator = { ...job, actor: { type: "operator" as const } };
    expect(parseCallbackJob(JSON.stringify(operator))).toEqual(operator);
  });

  it("refuses malformed messages as not retryable", () => {
    for (const text of ["not json", "{}", JSON.stringify({ ...job, timeoutMs: 500 })]) {
      let caught: unknown;
      try {
        parseCallbackJob(text);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(DeliveryError);
      expect(isRetryable(caught)).toBe(false);
    }
  });
});

describe("isRetryable", () => {
  it("retries anything but a non-retryable DeliveryError", () => {
    expect(isRetryable(new DeliveryError("HTTP 500", true))).toBe(true);
    expect(isRetryable(new DeliveryError("refused", false))).toBe(false);
    expect(isRetryable(new Error("store down"))).toBe(true);
  });
});

describe("callbackUrlProblem", () => {
  it("accepts http(s) URLs, https only when private destinations are refused", () => {
    expect(
      callbackUrlProblem("https://hooks.example/x?y=1", { allowPrivate: false, egress: nodeEgress }),
    ).toBeUndefined();
    expect(
      callbackUrlProblem("http://127.0.0.1:9/x", { allowPrivate: true, egress: nodeEgress }),
    ).toBeUndefined();
    expect(callbackUrlProblem("http://hooks.example/x", { allowPrivate: false, egress: nodeEgress })).toMatch(
      /https/,
    );
    expect(callbackUrlProblem("ftp://hooks.example/", { allowPrivate: true, egress: nodeEgress })).toMatch(
      /http or https/,
    );
    expect(callbackUrlProblem("/relative", { allowPrivate: true, egress: nodeEgress })).toMatch(/absolute/);
    expect(
      callbackUrlProblem("https://u:p@hooks.example/", { allowPrivate: false, egress: nodeEgress }),
    ).toMatch(/credentials/);
    expect(
      callbackUrlProblem("http://169.254.169.254/x", { allowPrivate: true, egress: nodeEgress }),
    ).toMatch(/does not call/);
    expect(
      callbackUrlProblem("https://[fd00:ec2::254]/x", { allowPrivate: false, egress: nodeEgress }),
    ).toMatch(/does not call/);
    expect(
      callbackUrlProblem(`https://hooks.example/${"a".repeat(2100)}`, {
        allowPrivate: false,
        egress: nodeEgress,
      }),
    ).toMatch(/at most/);
  });
});
