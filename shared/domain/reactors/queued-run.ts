import type { LoggedToken } from "#shared/domain/audit-entry.ts";
import { conflict } from "#shared/domain/errors.ts";
import {
  type DataRead,
  effectsStand,
  type IdempotencyClaimRef,
  runWithIdempotencyClaim,
} from "#shared/domain/idempotency-scope.ts";
import { tenantBucket } from "#shared/domain/rate-limit.ts";
import { accessOfGrants, type Grants } from "#shared/domain/tokens/access.ts";
import { type IdempotencyStore, MAX_KEPT_ANSWER_CHARS } from "#shared/ports/stores.ts";
import type { ReactionFailures, ReactionOutcome, ReactionRunner } from "./callback-job.ts";
import { argsBinding, dataReadsOf, outcomeBinding, type ReactDeps, reactorAndCode, run } from "./react.ts";
import { ReactorError } from "./run-error.ts";

/** The outcome a failed run answers: a custom error's own status and body, else `failures` renders it. */
function outcomeOfError(failures: ReactionFailures, error: unknown, requestId: string): ReactionOutcome {
  if (error instanceof ReactorError && error.customBody !== undefined)
    return { status: error.status, body: error.customBody };
  return failures.ofError(error, requestId);
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
    async run(job) {
      // A queued run is a request of its own: one render budget, drawn from its tenant's share.
      const deps = { ...base, expressions: base.expressions.forRequest(tenantBucket(job.tenantId)) };
      const stored = await deps.reactors.reaction(job.tenantId, job.requestId);
      if (stored)
        return JSON.parse(
          await deps.sealer.open(outcomeBinding(job.tenantId, job.requestId), stored),
        ) as ReactionOutcome;
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
        else
          try {
            const { reactor, formula } = await reactorAndCode(deps, job.tenantId, job.reactorId);
            const { args, viewer } = JSON.parse(
              await deps.sealer.open(argsBinding(job.tenantId, job.requestId), job.sealedArgs),
            ) as { args: Record<string, unknown>; viewer?: Grants };
            // The caller's grants at react time (a job queued before they were recorded shows nothing).
            const access = accessOfGrants(viewer ?? { application: { permissions: [], rules: [] } });
            const caller = { access, who: { tenantId: job.tenantId, actor: job.actor } };
            const running = () => run(deps, reactor, formula, args, job.timeoutMs, caller, reads, shown);
            outcome = {
              status: 200,
              body: await (claim ? runWithIdempotencyClaim(claim, running) : running()),
            };
          } catch (error) {
            outcome = outcomeOfError(failures, error, job.requestId);
          }
        // A react-async result keeps which tokens its args read, so reading it logs them again, and the data its
        // args and its code's svc calls read, as they were: it is answered only while that data is (reactionResult).
        if (job.argsRead) {
          const argsReads = await dataReadsOf(
            deps,
            job.tenantId,
            job.argsRead.map((t) => t.id),
          );
          reads.unshift(...argsReads);
        }
        const seal = (kept: ReactionOutcome) =>
          deps.sealer.seal(
            outcomeBinding(job.tenantId, job.requestId),
            JSON.stringify(job.argsRead ? { ...kept, argsRead: job.argsRead, reads, shown } : kept),
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
