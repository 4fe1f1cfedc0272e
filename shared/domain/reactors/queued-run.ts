import type { LoggedToken } from "#shared/domain/audit-entry.ts";
import { conflict, DomainError, notFound } from "#shared/domain/errors.ts";
import {
  type DataRead,
  effectsStand,
  type IdempotencyClaimRef,
  runWithIdempotencyClaim,
} from "#shared/domain/idempotency-scope.ts";
import { tenantBucket } from "#shared/domain/rate-limit.ts";
import { accessOfGrants, type Grants } from "#shared/domain/tokens/access.ts";
import { type IdempotencyStore, MAX_KEPT_ANSWER_CHARS } from "#shared/ports/stores.ts";
import type { CallbackJob, ReactionFailures, ReactionOutcome, ReactionRunner } from "./callback-job.ts";
import {
  argsBinding,
  dataReadsOf,
  outcomeBinding,
  type ReactDeps,
  reactionReadStands,
  reactorAndCode,
  run,
} from "./react.ts";
import { ReactorError } from "./run-error.ts";

/** The outcome a failed run answers: a custom error's own status and body, else `failures` renders it. */
function outcomeOfError(failures: ReactionFailures, error: unknown, requestId: string): ReactionOutcome {
  if (error instanceof ReactorError && error.customBody !== undefined)
    return { status: error.status, body: error.customBody };
  return failures.ofError(error, requestId);
}

/** The args' tokens as the job recorded them when their data was opened (jobs queued before that: none). */
const argsReadsOf = (job: CallbackJob): DataRead[] =>
  (job.argsRead ?? []).flatMap(({ id, version, created, cvc }) =>
    version === undefined ? [] : [{ id, version, cvc: cvc ?? true, ...(created ? { created } : {}) }],
  );

/**
 * Throws unless every token `reads` names still stands as it was read (alive, the same token and version, its cvc
 * held): the data a queued run is handed, or a kept outcome was computed from, is used only while it is. A job
 * waits in its queue up to its retries' quarter of an hour, and an operator may redrive it from the dead-letter
 * queue days later: a card deleted meanwhile is not run on, nor is an outcome made of it delivered.
 */
async function readsStand(deps: ReactDeps, tenantId: string, reads: readonly DataRead[]): Promise<void> {
  try {
    for (const read of reads) await reactionReadStands(deps, tenantId, read);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.kind === "not-found")
      throw notFound("A token this reaction read (deleted or expired since, or its cvc past its hour)");
    throw conflict(
      "A token this reaction read, or the access of the application its code acts as, has changed since.",
    );
  }
}

/** A queued run's claim outlasts its code's timeout by this: the run's reads, sealing and outcome write. */
const RUN_LEASE_MARGIN_SECONDS = 60;

const RUN_TOOK_EFFECT =
  "This reaction's code ran and wrote to the vault (its tokenize block), and its outcome could not be kept; it is not run again.";

/**
 * A queued run's own idempotency claim, keyed by its request id: the tokens its code's `tokenize` creates record
 * their effect on it in the same transaction (idempotent-effects.ts), so a redelivery after they committed (the
 * outcome's write failed, the consumer died) finds them and never runs the code again. "effected" then.
 */
async function claimRun(
  store: Pick<IdempotencyStore, "claim">,
  job: { tenantId: string; requestId: string; timeoutMs: number },
): Promise<IdempotencyClaimRef | "effected"> {
  // Under the tenant's own idempotency prefix (`tenant:<id>:`), as every caller's scope: its deletion purges it.
  const scope = `tenant:${job.tenantId}:reaction`;
  // Held for as long as the run may last (its code's timeout, and the reads and writes around it): a second
  // delivery of the job while the first run still runs is refused, never a second run of the code.
  const lease = Math.ceil(job.timeoutMs / 1000) + RUN_LEASE_MARGIN_SECONDS;
  const claim = await store.claim(scope, job.requestId, "reaction", lease);
  if (claim.outcome === "claimed") return { scope, key: job.requestId, claimId: claim.claimId, effects: [] };
  // A run of this job still in progress (or one that died, until its lease lapses): redelivered later.
  if (claim.outcome === "in-flight") throw new Error("This reaction is still running.");
  return "effected";
}

/**
 * Runs queued reactions once per request id; the outcome is stored sealed, so redeliveries reuse it. With
 * `idempotency`, a run whose writes committed is never run again, even when its outcome could not be stored.
 */
export function reactionRunner(
  base: ReactDeps,
  failures: ReactionFailures,
  idempotency?: Pick<IdempotencyStore, "claim" | "release">,
): ReactionRunner {
  return {
    async giveUp(job, outcome) {
      const sealed = await base.sealer.seal(
        outcomeBinding(job.tenantId, job.requestId),
        JSON.stringify(outcome),
      );
      await base.reactors.storeReaction(job.tenantId, job.requestId, sealed, base.clock.now(), {
        reactorId: job.reactorId,
        ...(job.resultOwner !== undefined ? { owner: job.resultOwner } : {}),
      });
    },
    async run(job) {
      // A queued run is a request of its own: one render budget, drawn from its tenant's share.
      const deps = { ...base, expressions: base.expressions.forRequest(tenantBucket(job.tenantId)) };
      const stored = await deps.reactors.reaction(job.tenantId, job.requestId);
      if (stored) {
        const kept = JSON.parse(
          await deps.sealer.open(outcomeBinding(job.tenantId, job.requestId), stored),
        ) as ReactionOutcome;
        // A callback's kept outcome is delivered again (a retry, a redrive) only while its data stands; a react-async
        // result is checked each time it is read (reactionResult).
        if (job.callbackUrl === undefined) return kept;
        try {
          await readsStand(deps, job.tenantId, kept.reads ?? []);
          return kept;
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          return outcomeOfError(failures, error, job.requestId);
        }
      }
      const argsReads = argsReadsOf(job);
      const reads: DataRead[] = [];
      const shown: LoggedToken[] = [];
      const claim = idempotency ? await claimRun(idempotency, job) : undefined;
      try {
        return await finish();
      } catch (error) {
        // Nothing kept: a run that wrote nothing frees its claim (the redelivery runs it again); one that wrote
        // keeps its effect recorded, so the redelivery stores RUN_TOOK_EFFECT instead of writing a second time.
        if (idempotency && claim && claim !== "effected")
          await idempotency
            .release(claim.scope, claim.key, claim.claimId, effectsStand(claim.effects), claim.effects.length)
            .catch(() => undefined);
        throw error;
      }

      async function finish(): Promise<ReactionOutcome> {
        let outcome: ReactionOutcome;
        if (claim === "effected")
          outcome = outcomeOfError(failures, conflict(RUN_TOOK_EFFECT), job.requestId);
        else {
          // Set once the code is about to run: what fails before is no outcome of the reaction.
          let running = false;
          try {
            await readsStand(deps, job.tenantId, argsReads);
            const { reactor, formula } = await reactorAndCode(deps, job.tenantId, job.reactorId);
            const { args, viewer } = JSON.parse(
              await deps.sealer.open(argsBinding(job.tenantId, job.requestId), job.sealedArgs),
            ) as { args: Record<string, unknown>; viewer?: Grants };
            // The caller's grants at react time (a job queued before they were recorded shows nothing).
            const access = accessOfGrants(viewer ?? { application: { permissions: [], rules: [] } });
            const caller = {
              access,
              who: { tenantId: job.tenantId, actor: job.actor },
              handedOut: job.handedOut === true,
            };
            // The args' reads are kept twice (argsRead, and in reads): counted when the answer's size is checked.
            const reserveBytes = 2 * Buffer.byteLength(JSON.stringify(job.argsRead ?? [])) + 1024;
            const kept = { reads, shown, reserveBytes };
            const runCode = () => run(deps, reactor, formula, args, job.timeoutMs, caller, kept);
            running = true;
            outcome = {
              status: 200,
              body: await (claim ? runWithIdempotencyClaim(claim, runCode) : runCode()),
            };
          } catch (error) {
            // Before the code ran, only the domain's answer (a token gone or changed, the reactor deleted) is the
            // reaction's outcome: the store or KMS away (a throttled check read) fails this attempt, which the queue
            // retries, as a runner that throws does (callbacks.ts). Kept, its 503 was the reaction's outcome for
            // good, the code never run (round-4 review of df9eb1b).
            // Nor, once it wrote (its tokenize committed), is the store failing after that (the read of a token it
            // created, throttled): kept, a 503 told its caller to retry a run that took effect, so a retried
            // react-async created its tokens again. The attempt fails: the redelivery finds the effect recorded on
            // the claim and keeps RUN_TOOK_EFFECT (round-5 review of c08cc82).
            const wrote = claim !== undefined && claim.effects.length > 0;
            if ((!running || wrote) && !(error instanceof DomainError)) throw error;
            outcome = outcomeOfError(failures, error, job.requestId);
          }
        }
        // The outcome keeps which tokens its args read (a react-async result's read logs them again), and the data
        // its args and its code's svc calls read, as they were: it is answered (reactionResult) or delivered again
        // only while that data is. The args as they were opened; a job queued before that was recorded, as now.
        const unversioned = (job.argsRead ?? []).filter((t) => t.version === undefined).map((t) => t.id);
        reads.unshift(
          ...argsReads,
          ...(unversioned.length > 0 ? await dataReadsOf(deps, job.tenantId, unversioned) : []),
        );
        const argsRead = (job.argsRead ?? []).map(({ id, type }) => ({ id, type }));
        const seal = (kept: ReactionOutcome) =>
          deps.sealer.seal(
            outcomeBinding(job.tenantId, job.requestId),
            JSON.stringify({ ...kept, argsRead, reads, shown }),
          );
        let sealed = await seal(outcome);
        // An answer too long to keep is a failure that can be kept: the code ran, and is never run again for it.
        if (sealed.length > MAX_KEPT_ANSWER_CHARS)
          sealed = await seal(
            outcomeOfError(
              failures,
              new ReactorError(500, "Reactor Runtime Error", `The reactor's answer is too large to keep.`),
              job.requestId,
            ),
          );
        const kept = await deps.reactors.storeReaction(
          job.tenantId,
          job.requestId,
          sealed,
          deps.clock.now(),
          {
            reactorId: job.reactorId,
            ...(job.resultOwner !== undefined ? { owner: job.resultOwner } : {}),
          },
        );
        return JSON.parse(
          await deps.sealer.open(outcomeBinding(job.tenantId, job.requestId), kept),
        ) as ReactionOutcome;
      }
    },
  };
}
