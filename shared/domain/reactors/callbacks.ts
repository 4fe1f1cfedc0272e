/**
 * Delivery of an asynchronous reaction's result (react with callback_url): run the reaction (idempotent per
 * request id), sign the result per Standard Webhooks with the tenant's secret and POST it to the callback URL
 * under the proxy's SSRF rules. One call is one attempt; the queue (SQS, or the in-process one locally) owns
 * the retries: an attempt that throws is retried after `retryDelaySeconds(attempt)`, and after MAX_ATTEMPTS
 * (or at once, for a DeliveryError that is not retryable) the job goes to the dead-letter queue/store.
 *
 * Every attempt leaves one audit entry (reactor, invoke) holding the request id, the attempt number and the
 * outcome: never the payload, the URL or the secret.
 */
import { Webhook } from "standardwebhooks";
import * as z from "zod";
import { auditEvent, recordEvents } from "#shared/domain/audit-entry.ts";
import { TOKEN_TYPE_NAMES } from "#shared/domain/tokens/types.ts";
import type { Clock } from "#shared/ports/clock.ts";
import { type Egress, EgressError } from "#shared/ports/egress.ts";
import type { AuditLogStore } from "#shared/ports/stores.ts";
import {
  type CallbackJob,
  MAX_ATTEMPTS,
  type ReactionFailures,
  type ReactionOutcome,
  type ReactionRunner,
  type WebhookSecretSource,
} from "./callback-job.ts";
import { MAX_CALLBACK_URL_LENGTH } from "./callback-url.ts";

export { callbackUrlProblem, MAX_CALLBACK_URL_LENGTH } from "./callback-url.ts";

/** Attempts before a job is dead-lettered (the SQS redrive's maxReceiveCount too). */
export { MAX_ATTEMPTS };
/** Delay after the first failed attempt; it doubles with each further one. */
export const DEFAULT_RETRY_BASE_SECONDS = 60;
/** No retry waits longer than this (SQS allows 12 h; a quarter of an hour keeps the last try timely). */
export const MAX_RETRY_DELAY_SECONDS = 900;
/** The receiver's whole exchange (connect to last response byte). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The receiver's answer is read and thrown away; a larger one fails the attempt. */
export const MAX_RECEIVER_RESPONSE_BYTES = 64 * 1024;
/** Spec bounds of timeout_ms, the run's limit for asynchronous reactions. */
export const MIN_REACTION_TIMEOUT_MS = 10_000;
export const MAX_REACTION_TIMEOUT_MS = 210_000;

export const WEBHOOK_EVENT_COMPLETED = "reactor.reaction.completed";
export const WEBHOOK_EVENT_FAILED = "reactor.reaction.failed";

/**
 * Seconds a job stays invisible after its `attempt`-th attempt failed (attempts count from 1):
 * base, 2×base, 4×base, … capped at MAX_RETRY_DELAY_SECONDS. With the default base: 60, 120, 240, 480 s
 * between the five attempts (about 15 minutes in all).
 */
export function retryDelaySeconds(attempt: number, baseSeconds = DEFAULT_RETRY_BASE_SECONDS): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  return Math.min(MAX_RETRY_DELAY_SECONDS, baseSeconds * 2 ** exponent);
}

/**
 * An attempt that did not deliver. `message` is safe for logs, audit entries and dead-letter records (no
 * URL, payload or secret). Not `retryable`: retrying cannot help (the destination is refused by the SSRF
 * rules, the job is malformed), so the queue dead-letters it at once.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DeliveryError";
  }
}

/** Whether the queue should try again after this error (anything but a non-retryable DeliveryError). */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof DeliveryError) || error.retryable;
}

/** The webhook body (Standard Webhooks' recommended `{type, timestamp, data}` envelope). */
export interface ReactionWebhookPayload {
  type: typeof WEBHOOK_EVENT_COMPLETED | typeof WEBHOOK_EVENT_FAILED;
  /** ISO 8601, when this attempt was made. */
  timestamp: string;
  data: {
    request_id: string;
    reactor_id: string;
    /**
     * The URL this event was sent to, inside what the signature covers: whoever may react (`token:use`) chooses a
     * callback URL, so an event signed for their own receiver must not verify as one meant for the tenant's. A
     * receiver checks it is its own URL, as it checks the signature.
     */
    callback_url: string;
    /** The status the synchronous react would have answered. */
    status: number;
    /** The react answer, or the problem document of a failed run. */
    body: unknown;
  };
}

export function webhookPayload(job: CallbackJob, outcome: ReactionOutcome, at: Date): ReactionWebhookPayload {
  const ok = outcome.status >= 200 && outcome.status < 300;
  return {
    type: ok ? WEBHOOK_EVENT_COMPLETED : WEBHOOK_EVENT_FAILED,
    timestamp: at.toISOString(),
    data: {
      request_id: job.requestId,
      reactor_id: job.reactorId,
      callback_url: job.callbackUrl ?? "",
      status: outcome.status,
      body: outcome.body,
    },
  };
}

export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** Standard Webhooks headers for `body` (the exact bytes sent): id, unix-seconds timestamp, `v1,<sig>`. */
export function signWebhook(secret: string, messageId: string, at: Date, body: string): WebhookHeaders {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(messageId, at, body),
  };
}

export interface CallbackDeps {
  runner: ReactionRunner;
  /** The webhook's answer when the runner itself failed (problem+json, rendered by shared/http). */
  failures: Pick<ReactionFailures, "unrunnable">;
  webhookSecrets: WebhookSecretSource;
  auditLog: Pick<AuditLogStore, "append">;
  /** The service clock (audit entries follow the test clock locally). */
  clock: Clock;
  egress: Egress;
  delivery: {
    /** SVC_PROXY_ALLOW_PRIVATE: loopback/private receivers allowed (local mode). */
    allowPrivate: boolean;
    /** Only https receivers; default `!allowPrivate`, as for proxies. */
    requireHttps?: boolean;
    /** Default DELIVERY_TIMEOUT_MS. */
    timeoutMs?: number;
    /** host:port names of this service: a callback never calls the service itself. */
    selfHosts?: readonly string[];
  };
  /**
   * Wall clock of the webhook timestamp. Receivers check it against their own clocks (±5 minutes), so it is
   * real time even when the service clock is a test clock. Default: real time.
   */
  webhookClock?: Clock;
}

const realTime: Clock = { now: () => new Date() };

/**
 * One delivery attempt of `job` (`attempt` counts from 1: SQS's ApproximateReceiveCount). Resolves when the
 * receiver answered 2xx; throws otherwise (a DeliveryError for a failed delivery, the store's error when the
 * audit entry could not be written), and the queue retries or dead-letters the job.
 *
 * A runner that throws (the store or KMS unavailable) fails the attempt too; on the last attempt the
 * receiver is told instead, with a `reactor.reaction.failed` webhook carrying a 500 problem, so a caller
 * is never left waiting for a callback that will not come while its URL still answers.
 */
export async function processCallbackJob(
  deps: CallbackDeps,
  job: CallbackJob,
  attempt: number,
): Promise<void> {
  const audit = (outcome: string) =>
    recordEvents(deps, [
      auditEvent(
        deps,
        { tenantId: job.tenantId, actor: job.actor },
        "reactor",
        job.reactorId,
        "invoke",
        `Callback delivery attempt ${attempt} for request ${job.requestId}: ${outcome}`,
      ),
    ]);

  let outcome: ReactionOutcome;
  try {
    outcome = await deps.runner.run(job);
  } catch (error) {
    if (attempt < MAX_ATTEMPTS || (job.callbackUrl === undefined && !deps.runner.giveUp)) {
      await audit("the reaction could not be run");
      throw new DeliveryError("The reaction could not be run.", true, { cause: error });
    }
    outcome = deps.failures.unrunnable(job.requestId);
    // react-async: its caller is told through its result, kept now (round-5 review of c08cc82: a pre-run failure
    // is retried, no longer kept as the outcome, and a dead-lettered job left its result a 404 for good).
    if (job.callbackUrl === undefined && deps.runner.giveUp) {
      try {
        await deps.runner.giveUp(job, outcome);
      } catch (cause) {
        await audit("the reaction could not be run");
        throw new DeliveryError("The reaction could not be run.", true, { cause });
      }
    }
  }

  const callbackUrl = job.callbackUrl;
  if (callbackUrl === undefined) {
    // react-async: the runner stored the outcome for its caller's GET /reactors/{id}/results/{requestId}.
    await audit(`result stored (status ${outcome.status})`);
    return;
  }

  let secret: string;
  try {
    secret = await deps.webhookSecrets.secret(job.tenantId);
  } catch (error) {
    await audit("the webhook secret is unavailable");
    throw new DeliveryError("The webhook secret is unavailable.", true, { cause: error });
  }

  const at = (deps.webhookClock ?? realTime).now();
  const body = JSON.stringify(webhookPayload(job, outcome, at));
  let headers: WebhookHeaders;
  try {
    headers = signWebhook(secret, job.requestId, at, body);
  } catch (error) {
    // standardwebhooks refuses an empty or malformed secret; the source may serve a good one later.
    await audit("the webhook secret is invalid");
    throw new DeliveryError("The webhook secret is invalid.", true, { cause: error });
  }

  const allowPrivate = deps.delivery.allowPrivate;
  let status: number;
  try {
    const response = await deps.egress.forward(
      {
        tenantId: job.tenantId,
        destinationUrl: callbackUrl,
        pathSuffix: "",
        rawQuery: "",
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "svc-vault-webhooks/1", ...headers },
        body: Buffer.from(body, "utf8"),
      },
      {
        allowPrivate,
        requireHttps: deps.delivery.requireHttps ?? !allowPrivate,
        timeoutMs: deps.delivery.timeoutMs ?? DELIVERY_TIMEOUT_MS,
        selfHosts: [...(deps.delivery.selfHosts ?? [])],
        maxResponseBytes: MAX_RECEIVER_RESPONSE_BYTES,
      },
    );
    status = response.status;
  } catch (error) {
    const failure = deliveryFailure(error);
    await audit(failure.message);
    throw failure;
  }

  if (status >= 200 && status < 300) {
    await audit(`delivered (HTTP ${status})`);
    return;
  }
  await audit(`HTTP ${status}`);
  throw new DeliveryError(`HTTP ${status}`, true);
}

/**
 * The egress's refusals (400 invalid destination, 403 forbidden by the SSRF rules) cannot succeed on a retry:
 * not retryable. Timeouts, unreachable receivers and oversized answers are.
 */
function deliveryFailure(error: unknown): DeliveryError {
  if (!(error instanceof EgressError))
    return new DeliveryError("The callback could not be sent.", true, { cause: error });
  const detail = error.message.replaceAll("destination_url", "callback URL");
  switch (error.code) {
    case "invalid_destination":
    case "forbidden_destination":
      return new DeliveryError(`refused: ${detail}`, false, { cause: error });
    case "timeout":
      return new DeliveryError(`timeout: ${detail}`, true, { cause: error });
    default:
      return new DeliveryError(`${error.code}: ${detail}`, true, { cause: error });
  }
}

const actorSchema = z.object({
  id: z.string().min(1).optional(),
  type: z.enum(["application", "user", "session", "operator", "system", "proxy_key"]),
});

const callbackJobSchema = z.object({
  requestId: z.string().min(1).max(200),
  tenantId: z.string().min(1),
  reactorId: z.string().min(1),
  callbackUrl: z.string().min(1).max(MAX_CALLBACK_URL_LENGTH).optional(),
  resultOwner: z.string().min(1).max(500).optional(),
  argsRead: z
    .array(
      z.object({
        id: z.string().min(1).max(1000),
        type: z.enum(TOKEN_TYPE_NAMES),
        version: z.number().int().optional(),
        created: z.string().min(1).max(100).optional(),
        cvc: z.boolean().optional(),
      }),
    )
    .max(1000)
    .optional(),
  timeoutMs: z.number().int().min(MIN_REACTION_TIMEOUT_MS).max(MAX_REACTION_TIMEOUT_MS),
  sealedArgs: z.string(),
  actor: actorSchema,
  enqueuedAt: z.string().min(1),
});

/** A queued message back into a job; a malformed one is a non-retryable DeliveryError (straight to the DLQ). */
export function parseCallbackJob(text: string): CallbackJob {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DeliveryError("The queued job is not JSON.", false);
  }
  const parsed = callbackJobSchema.safeParse(value);
  if (!parsed.success) throw new DeliveryError("The queued job is malformed.", false);
  const { actor, callbackUrl, resultOwner, argsRead, ...job } = parsed.data;
  return {
    ...job,
    ...(argsRead !== undefined ? { argsRead } : {}),
    ...(callbackUrl !== undefined ? { callbackUrl } : {}),
    ...(resultOwner !== undefined ? { resultOwner } : {}),
    actor: actor.id === undefined ? { type: actor.type } : { id: actor.id, type: actor.type },
  };
}
