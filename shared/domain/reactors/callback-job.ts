import type { Actor } from "#shared/domain/audit.ts";
import type { DataRead } from "#shared/domain/idempotency-scope.ts";
import type { TokenType } from "#shared/domain/tokens/types.ts";

/**
 * Attempts of one callback job before it is dead-lettered: the local queue's limit and the SQS redrive's
 * maxReceiveCount (lib/constructs/vault-data.ts), defined here once for both.
 */
export const MAX_ATTEMPTS = 5;

/** A token a queued reaction's args detokenized: which, and the version, creation and cvc its data was read at. */
export type ArgsRead = { id: string; type: TokenType } & Partial<
  Pick<DataRead, "version" | "created" | "cvc">
>;

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
  /**
   * The tokens its args detokenized, as they were then (never data): checked before the run and before each
   * delivery of a kept outcome, and logged again when a react-async result is read. Jobs queued before versions
   * were recorded carry id and type only.
   */
  argsRead?: ArgsRead[];
  /** 10000–210000 (spec); the run's limit. */
  timeoutMs: number;
  /** Sealer output of JSON `{args, viewer}` (the caller's grants) bound to (tenantId, requestId, "reaction_args"). */
  sealedArgs: string;
  /** Who asked, for the audit log. */
  actor: Actor;
  /** Asked with a handed-out key (sessions.ts isHandedOut): the code's svc calls spend as it would. */
  handedOut?: true;
  enqueuedAt: string;
}

/** The reaction's outcome as the webhook carries it: the react answer, or a problem for a failed run. */
export interface ReactionOutcome {
  /** HTTP status the synchronous react would have answered (200, or the error's status). */
  status: number;
  body: unknown;
  /** The body is a problem document (application/problem+json), not a custom error's own body. */
  problem?: boolean;
  /** Kept with the outcome (CallbackJob.argsRead, id and type); never answered. */
  argsRead?: { id: string; type: TokenType }[];
  /**
   * Kept with the outcome: the data it was computed from or shows (its `tokens` with data), checked before a
   * react-async result is answered and before a kept outcome is delivered again; never answered.
   */
  reads?: DataRead[];
  /** Kept with the outcome: the tokens its `tokens` answer shows data of; logged again when a result is read. */
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
  /**
   * Keeps `outcome` as a react-async job's result when the queue gives up on it (its last attempt failed with no
   * outcome): its caller reads that, never a 404 ("not yet run") for good. The first outcome kept stays.
   */
  giveUp?(job: CallbackJob, outcome: ReactionOutcome): Promise<void>;
}

/** The tenant's Standard Webhooks secret (`whsec_…`), used to sign callbacks. */
export interface WebhookSecretSource {
  secret(tenantId: string): Promise<string>;
}
