import type { Actor } from "#shared/domain/audit.ts";
import type { DataRead } from "#shared/domain/idempotency-scope.ts";
import type { TokenType } from "#shared/domain/tokens/types.ts";

/**
 * Attempts of one callback job before it is dead-lettered: the local queue's limit and the SQS redrive's
 * maxReceiveCount (lib/constructs/vault-data.ts), defined here once for both.
 */
export const MAX_ATTEMPTS = 5;

/**
 * An asynchronous reaction (react with callback_url, or react-async): enqueued after the arguments were detokenized and
 * validated. The arguments travel sealed under the tenant's data key; queues never see plaintext.
 */
export interface CallbackJob {
  /** Returned to the caller with the 202; the webhook's id; makes processing idempotent. */
  requestId: string;
  tenantId: string;
  reactorId: string;
  /** Where the result is POSTed; absent for react-async, whose result is only stored for its caller. */
  callbackUrl?: string;
  /** react-async: who may read the stored result (resultOwnerOf: the credential and its grant). */
  resultOwner?: string;
  /** react-async: the tokens (id, type; never data) its args read, logged again when the result is read. */
  argsRead?: { id: string; type: TokenType }[];
  /** 10000–210000 (spec); the run's limit. */
  timeoutMs: number;
  /** Sealer output of JSON `{args, viewer}` (the caller's grants) bound to (tenantId, requestId, "reaction_args"). */
  sealedArgs: string;
  /** Who asked, for the audit log. */
  actor: Actor;
  enqueuedAt: string;
}

/** The reaction's outcome as the webhook carries it: the react answer, or a problem for a failed run. */
export interface ReactionOutcome {
  /** HTTP status the synchronous react would have answered (200, or the error's status). */
  status: number;
  body: unknown;
  /** The body is a problem document (application/problem+json), not a custom error's own body. */
  problem?: boolean;
  /** Stored with a react-async result only (CallbackJob.argsRead); never answered. */
  argsRead?: { id: string; type: TokenType }[];
  /**
   * Stored with a react-async result only: the data it was computed from or shows (its `tokens` with data),
   * checked before it is answered.
   */
  reads?: DataRead[];
  /** Stored with a react-async result only: the tokens its `tokens` answer shows data of; logged again when read. */
  shown?: { id: string; type: TokenType }[];
}

/**
 * Runs the reaction of a job once: a second call for the same requestId answers the stored outcome instead of
 * running the code again (a retried delivery never re-runs the reactor).
 */
/**
 * How failed reactions are told in a webhook: the status and problem the synchronous API would answer.
 * The domain does not speak HTTP: shared/http/problem.ts provides it (reactionFailures).
 */
export interface ReactionFailures {
  /** A run that threw `error`. */
  ofError(error: unknown, requestId: string): ReactionOutcome;
  /** A reaction that could not be run at all (its store or KMS unavailable at the last attempt). */
  unrunnable(requestId: string): ReactionOutcome;
}

export interface ReactionRunner {
  run(job: CallbackJob): Promise<ReactionOutcome>;
}

/** The tenant's Standard Webhooks secret (`whsec_…`), used to sign callbacks. */
export interface WebhookSecretSource {
  secret(tenantId: string): Promise<string>;
}
