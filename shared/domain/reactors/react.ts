import { randomBytes, randomUUID } from "node:crypto";
import { configuredApplication, sandboxSvc } from "#shared/domain/acting-application.ts";
import { requireKeptFits } from "#shared/domain/answer-size.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import {
  actorOf,
  auditEvent,
  type LoggedToken,
  recordTokenReads,
  type Who,
} from "#shared/domain/audit-entry.ts";
import type { Authenticator } from "#shared/domain/authentication.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, DomainError, type FieldErrors, notFound, validationError } from "#shared/domain/errors.ts";
import { grantVersionOf } from "#shared/domain/grant-version.ts";
import { currentIdempotencyClaim, type DataRead, noteDataRead } from "#shared/domain/idempotency-scope.ts";
import { isPlainObject } from "#shared/domain/merge-patch.ts";
import { isHandedOut } from "#shared/domain/sessions.ts";
import { accessOf, grantsOf, type TokenAccess } from "#shared/domain/tokens/access.ts";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { createDetokenizer, findReferences } from "#shared/domain/tokens/detokenize.ts";
import type { TokenView } from "#shared/domain/tokens/presenting.ts";
import { checkStillReadable, standingToken } from "#shared/domain/tokens/replay.ts";
import { callerVersion } from "#shared/domain/tokens/token.ts";
import { tokenizeBatch } from "#shared/domain/tokens/tokenize.ts";
import type { TokenType } from "#shared/domain/tokens/types.ts";
import type { Egress } from "#shared/ports/egress.ts";
import type { JobQueue } from "#shared/ports/job-queue.ts";
import { REACTION_RETENTION_SECONDS, type ReactorStore } from "#shared/ports/reactor-store.ts";
import type { Sandbox } from "#shared/ports/sandbox.ts";
import type { SessionStore } from "#shared/ports/session-store.ts";
import type { ApplicationReader, TransactionStore } from "#shared/ports/stores.ts";
import { validateArgs } from "./args.ts";
import type { ArgsRead, CallbackJob, ReactionOutcome, WebhookSecretSource } from "./callback-job.ts";
import { callbackUrlProblem } from "./callback-url.ts";
import {
  type OpenedReactor,
  openReactor,
  type RunnableCode,
  runnableOf,
  type StoredFormula,
  type StoredReactor,
  webhookSecretBinding,
} from "./model.ts";
import { ReactorError, reactorFailure } from "./run-error.ts";

export { ReactorError };

export const ASYNC_TIMEOUT_DEFAULT_MS = 10_000;

export interface ReactDeps extends TokenDeps {
  /** A tokenize block is written as POST /tokenize's batch is (staged when it passes one write). */
  transactions: TransactionStore;
  reactors: ReactorStore;
  applications: ApplicationReader;
  /** The configured application's lookup (cached). */
  authenticator: Pick<Authenticator, "application" | "keyHolder">;
  sessions: SessionStore;
  sandbox: Sandbox;
  /** Checks a callback_url against the address rule delivery will apply. */
  egress: Pick<Egress, "refusesAlways">;
  jobQueue?: JobQueue;
  config: { syncReactTimeoutMs: number; proxyAllowPrivate: boolean };
}

export interface ReactInput {
  args?: unknown;
  callback_url?: string;
  timeout_ms?: number;
}

export const argsBinding = (tenantId: string, requestId: string) => ({
  tenantId,
  tokenId: requestId,
  field: "reaction_args",
});
export const outcomeBinding = (tenantId: string, requestId: string) => ({
  tenantId,
  tokenId: requestId,
  field: "reaction_outcome",
});

/** The reactor (its configuration opened) and the code it runs: its own, or its formula's. */
export async function reactorAndCode(deps: ReactDeps, tenantId: string, reactorId: string) {
  const stored = await deps.reactors.get<StoredReactor>("reactor", tenantId, reactorId);
  if (!stored) throw notFound("The reactor");
  const formula =
    stored.formula_id === undefined
      ? undefined
      : await deps.reactors.get<StoredFormula>("formula", tenantId, stored.formula_id);
  const formulaOrCode = runnableOf(stored, formula);
  if (!formulaOrCode) throw notFound("The reactor's formula");
  return { reactor: await openReactor(deps.sealer, stored), formula: formulaOrCode };
}

/** Whom a reaction answers: the caller's access (what it may be shown) and who it is (for the audit log). */
interface Caller {
  access: TokenAccess;
  who: Who;
  /** A handed-out key (public, browser session) asked: the code's svc calls spend as it does (isHandedOut). */
  handedOut?: boolean;
}

/**
 * What a kept answer (a react-async result, read again for 24 hours) shows of token data: the tokens whose data
 * it holds as they were when shown, answered only while they still are (reactionResult), and logged again.
 */
export interface KeptShowing {
  reads: DataRead[];
  shown: LoggedToken[];
  /** Bytes the kept record holds beside the answer and these (the args' reads): counted when its size is checked. */
  reserveBytes: number;
}

/**
 * What a kept outcome's record holds for each token a tokenize block shows data of: its read entry (id, version,
 * created_at, cvc; about 100 bytes of JSON) and its shown entry (id, type; about 60), with room to spare.
 */
const KEPT_BYTES_PER_SHOWN_TOKEN = 256;

/** `tokenize` from the code (an object or array of POST /tokens bodies) turned into real tokens. */
async function tokenize(
  deps: ReactDeps,
  reactor: OpenedReactor,
  principal: TenantPrincipal | undefined,
  block: unknown,
  caller: Caller,
  kept: KeptShowing | undefined,
  raw: unknown,
): Promise<unknown> {
  if (block === undefined || block === null) return undefined;
  if (!principal)
    throw new DomainError("invalid", "The reactor has no application to tokenize with.", {
      code: "reactor-error",
    });
  if (!Array.isArray(block) && !isPlainObject(block))
    throw validationError("The reactor's tokenize block must be an object or an array.");
  // One batch as POST /tokenize makes it: at most 250 requests, all or nothing, its answer's size checked before
  // its commit. Each created at once, a block of 600 stored part of itself before a 503, and 20 large masks were
  // stored before a 500 answer-too-large (review round 11). Created as the reactor's application, answered to the
  // caller: no more than the caller may read.
  const { answer, views } = await tokenizeBatch(deps, principal, block, {
    viewer: caller.access,
    // The reaction's answer, raw beside the tokens, is what must fit (checked before the commit: after it, a
    // 500 answer-too-large left the tokens stored, review round 12).
    within: (tokens) => ({ tokens, ...(raw !== undefined ? { raw } : {}) }),
    // A queued run's answer is kept, in one record: it must fit that, with what the record keeps beside it.
    ...(kept
      ? {
          requireFits: (answer: unknown, detail: string, views: readonly TokenView[]) =>
            requireKeptFits(
              { status: 200, body: answer },
              kept.reserveBytes +
                Buffer.byteLength(JSON.stringify({ reads: kept.reads, shown: kept.shown })) +
                KEPT_BYTES_PER_SHOWN_TOKEN * views.filter((view) => view.data !== undefined).length,
              detail,
            ),
        }
      : {}),
    // Data the caller did not give, shown to them: a read by the caller, logged before the commit (after it, a
    // throttled entry answered 503 for stored tokens, whose retry stored them again: review round 12).
    beforeCommit: async (answered) => {
      const shown = answered.filter((view) => view.data !== undefined);
      if (shown.length === 0) return;
      await recordTokenReads(
        deps,
        caller.who,
        shown.map((view) => ({ id: view.id, type: view.type as TokenType })),
        `Token read in the answer of reactor ${reactor.id}`,
      );
    },
  });
  for (const view of views) {
    if (view.data === undefined) continue;
    // A kept answer holds this data (a card's cvc included): it is answered again only while the token still
    // holds it, as an idempotent replay presents a token again only from the token as it is then.
    if (kept) {
      const shownCvc = isPlainObject(view.data) && Object.hasOwn(view.data, "cvc");
      for (const read of await dataReadsOf(deps, reactor.tenant_id, [view.id]))
        kept.reads.push({ ...read, cvc: read.cvc && shownCvc });
      kept.shown.push({ id: view.id, type: view.type as TokenType });
    }
  }
  return answer;
}

/** The tokens `ids` as a run read them (now), bound to the application the code acted as, if it did. */
export async function dataReadsOf(
  deps: ReactDeps,
  tenantId: string,
  ids: string[],
  acting?: TenantPrincipal,
) {
  const actingGrant = acting && {
    applicationId: acting.application.id,
    version: grantVersionOf(acting) ?? "",
  };
  const found = new Map((await deps.tokens.getMany(tenantId, ids)).map((token) => [token.id, token]));
  return ids.map((id): DataRead => {
    const token = found.get(id);
    // Deleted by the code itself: a replay finds it gone, as it would any token deleted since.
    return {
      id,
      version: token ? callerVersion(token) : -1,
      cvc: token?.sealed_cvc !== undefined,
      ...(token ? { created: token.created_at } : {}),
      ...(actingGrant ? { actingGrant } : {}),
    };
  });
}

/**
 * Tokens whose data the code got through `svc` (as the reactor's application): what it answers is bound to them
 * as they are now, and to that application's grant (idempotency-scope.ts DataRead), as it is to the tokens the
 * args detokenized: noted on the idempotent request's claim, and handed to `kept` (a react-async result's).
 */
async function noteDataHandedToCode(
  deps: ReactDeps,
  acting: TenantPrincipal,
  ids: string[],
  kept?: DataRead[],
) {
  if (ids.length === 0 || (!kept && !currentIdempotencyClaim())) return;
  const reads = await dataReadsOf(deps, acting.tenantId, ids, acting);
  for (const read of reads) noteDataRead(read);
  kept?.push(...reads);
}

/**
 * An idempotent replay's check of data its answer came from: the token as it is now (tokens/replay.ts), and for
 * data handed to the code through `svc`, the grant of the application it acted as, unchanged since.
 */
export async function checkReactionRead(
  deps: ReactDeps,
  principal: TenantPrincipal,
  read: DataRead,
  audit = true,
) {
  await actingGrantStands(deps, principal.tenantId, read);
  await checkStillReadable(deps, principal, read, audit);
}

/** checkReactionRead without a caller: a queued run's own check of its args and of a kept outcome (nothing logged). */
export async function reactionReadStands(deps: ReactDeps, tenantId: string, read: DataRead) {
  await actingGrantStands(deps, tenantId, read);
  await standingToken(deps, tenantId, read);
}

async function actingGrantStands(deps: ReactDeps, tenantId: string, read: DataRead) {
  if (!read.actingGrant) return;
  const application = await deps.authenticator.application(tenantId, read.actingGrant.applicationId);
  const now = application && grantVersionOf({ kind: "application", tenantId, keyId: "", application });
  if (now !== read.actingGrant.version)
    throw conflict("The access of the application this reactor acts as has changed.");
}

/** Runs the formula's code on validated args; answers `{tokens?, raw?}` or throws the error the caller gets. */
export async function run(
  deps: ReactDeps,
  reactor: OpenedReactor,
  formula: RunnableCode,
  args: Record<string, unknown>,
  timeoutMs: number,
  caller: Caller,
  kept?: KeptShowing,
) {
  const principal = await configuredApplication(
    deps.authenticator,
    reactor.tenant_id,
    reactor.application_id,
    "reactor",
    [
      reactor.modified_by ?? reactor.created_by,
      ...((formula.modified_at ?? "") > (reactor.modified_at ?? reactor.created_at)
        ? [formula.modified_by]
        : []),
    ],
  );
  const result = await deps.sandbox.run({
    tenantId: reactor.tenant_id,
    code: formula.code,
    input: { args, configuration: reactor.configuration },
    timeoutMs,
    ...(formula.allowed_hosts ? { allowedHosts: formula.allowed_hosts } : {}),
    ...sandboxSvc(deps, principal, `reactor ${reactor.id}`, caller.handedOut === true),
  });
  if (principal) await noteDataHandedToCode(deps, principal, result.dataFrom ?? [], kept?.reads);
  if (!result.ok) throw reactorFailure(result.error, timeoutMs);
  const value = isPlainObject(result.value) ? result.value : {};
  const tokens = await tokenize(deps, reactor, principal, value.tokenize, caller, kept, value.raw);
  return {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(value.raw !== undefined ? { raw: value.raw } : {}),
  };
}

/**
 * Detokenizes (token:use per container, ≤ 100 tokens) then validates args by the formula's parameters. Each
 * token's `read` entry is written before its data is opened (the detokenizer's audit hook), in one write with
 * the reactor's `invoked` entry: the data is handed to the formula's code, synchronously or later from the queue.
 */
async function prepareArgs(
  deps: ReactDeps,
  principal: TenantPrincipal,
  reactor: OpenedReactor,
  formula: RunnableCode,
  args: unknown,
  invoked: LogEntry,
  read: ArgsRead[] = [],
) {
  const detokenized = await createDetokenizer(deps, principal.tenantId, accessOf(principal), (tokens) => {
    // As they are when their data is opened: a queued run, and each delivery of its outcome, checks they still are.
    read.push(
      ...tokens.map((t) => ({
        id: t.id,
        type: t.type,
        version: callerVersion(t),
        created: t.created_at,
        cvc: t.sealed_cvc !== undefined,
      })),
    );
    return recordTokenReads(deps, principal, tokens, `Token detokenized for reactor ${reactor.id}`, [
      invoked,
    ]);
  }).json(args ?? {});
  const validated = validateArgs(detokenized, formula.request_parameters);
  if (!validated.ok)
    throw validationError(
      "The args do not satisfy the formula's request parameters.",
      withoutDetokenizedFields(args, validated.errors),
    );
  return validated.args;
}

/**
 * Which parameters failed tells about the data when their values came from tokens (one bit per parameter per
 * request): those are folded into one fixed entry; parameters the caller gave in the clear keep theirs.
 */
function withoutDetokenizedFields(raw: unknown, errors: FieldErrors): FieldErrors {
  // `args.card.number` came from a token when the raw args hold an expression at card.number or card.
  const fromTokens = (field: string) => {
    let value: unknown = raw;
    for (const part of field.split(".").slice(1)) {
      if (typeof value === "string") break;
      if (!isPlainObject(value) || !Object.hasOwn(value, part)) return false;
      value = value[part];
    }
    return findReferences(value).length > 0;
  };
  const kept: FieldErrors = {};
  let folded = false;
  for (const [field, messages] of Object.entries(errors)) {
    if (fromTokens(field)) folded = true;
    else kept[field] = messages;
  }
  if (folded) kept.args = ["a detokenized value does not satisfy the request parameters"];
  return kept;
}

/** A reaction: run now (its answer), or queued for a callback (the request id the webhook will carry). */
export type Reaction =
  | { queued: false; reaction: Awaited<ReturnType<typeof run>> }
  | { queued: true; requestId: string };

export function react(
  deps: ReactDeps,
  principal: TenantPrincipal,
  reactorId: string,
  input: ReactInput,
): Promise<Reaction> {
  return reactAs(deps, principal, reactorId, input);
}

/**
 * react-async: queued as a callback reaction is, but with no callback: its outcome is stored (sealed) for the
 * same caller to fetch (reactionResult). Answers the request id.
 */
export async function reactAsync(
  deps: ReactDeps,
  principal: TenantPrincipal,
  reactorId: string,
  input: { args?: unknown },
): Promise<string> {
  const reaction = await reactAs(deps, principal, reactorId, input, resultOwnerOf(principal));
  if (!reaction.queued) throw new Error("react-async ran synchronously");
  return reaction.requestId;
}

/**
 * Who may read a react-async result: the credential that asked (its key, or its session) with its grant as it
 * was. The result was presented under that grant, so after any change of it (a rule downgraded from reveal to
 * mask) the result is no longer answered, as an idempotent replay is not.
 */
function resultOwnerOf(principal: TenantPrincipal): string {
  const credential =
    principal.kind === "session" ? `session:${principal.session.id}` : `key:${principal.keyId}`;
  return `${credential}:grant:${grantVersionOf(principal) ?? "none"}`;
}

/** The outcome of a react-async request (its status and body, as react would have answered), for its caller only. */
export async function reactionResult(
  deps: ReactDeps,
  principal: TenantPrincipal,
  reactorId: string,
  requestId: string,
): Promise<ReactionOutcome> {
  const stored = await deps.reactors.reactionRecord(principal.tenantId, requestId);
  const keptUntil = stored?.storedAt ? Date.parse(stored.storedAt) + REACTION_RETENTION_SECONDS * 1000 : 0;
  // Not yet run, someone else's (another key, session or tenant: the tenant is in the key), another reactor's,
  // a callback reaction's or past its 24 hours: all the same 404, so a request id tells nothing.
  if (
    !stored ||
    stored.reactorId !== reactorId ||
    stored.owner === undefined ||
    stored.owner !== resultOwnerOf(principal) ||
    keptUntil <= deps.clock.now().getTime()
  )
    throw notFound("The reactor result");
  const outcome = JSON.parse(
    await deps.sealer.open(outcomeBinding(principal.tenantId, requestId), stored.sealedOutcome),
  ) as ReactionOutcome;
  // Answered only while the data it was computed from is (as an idempotent replay is): 404 gone, 409 changed.
  for (const read of outcome.reads ?? []) await checkReactionRead(deps, principal, read, false);
  // The result may hold what the code made of the args' token data: handed out again, so logged again (as an
  // idempotent replay is), and nothing is answered when the entries cannot be written.
  await recordTokenReads(
    deps,
    principal,
    [...(outcome.argsRead ?? []), ...(outcome.shown ?? [])],
    `Token data handed out again in a react-async result (request ${requestId})`,
    [auditEvent(deps, principal, "reactor", reactorId, "read", `Reactor result read (request ${requestId})`)],
  );
  const { argsRead: _read, reads: _reads, shown: _shown, ...answered } = outcome;
  return answered;
}

async function reactAs(
  deps: ReactDeps,
  principal: TenantPrincipal,
  reactorId: string,
  input: ReactInput,
  resultOwner?: string,
): Promise<Reaction> {
  // A callback_url delivery would refuse is a 400 now, not a dead letter after the run.
  const callbackProblem =
    input.callback_url === undefined
      ? undefined
      : callbackUrlProblem(input.callback_url, {
          allowPrivate: deps.config.proxyAllowPrivate,
          egress: deps.egress,
        });
  if (callbackProblem) throw validationError(callbackProblem, { callback_url: [callbackProblem] });
  // react-async (a result owner) is queued as a callback reaction is, without a callback.
  const queued = input.callback_url !== undefined || resultOwner !== undefined;
  if (queued && !deps.jobQueue)
    throw new DomainError("unavailable", "Asynchronous reactions are not available.");
  const { reactor, formula } = await reactorAndCode(deps, principal.tenantId, reactorId);
  const requestId = randomUUID();
  const invoked = auditEvent(
    deps,
    principal,
    "reactor",
    reactor.id,
    "invoke",
    queued ? `Reactor invoked asynchronously (request ${requestId})` : "Reactor invoked",
  );
  // The invocation is logged with the args' tokens, before their data is opened (one write).
  const read: ArgsRead[] = [];
  const args = await prepareArgs(deps, principal, reactor, formula, input.args, invoked, read);

  if (queued && deps.jobQueue) {
    const job: CallbackJob = {
      requestId,
      tenantId: principal.tenantId,
      reactorId: reactor.id,
      ...(input.callback_url !== undefined ? { callbackUrl: input.callback_url } : {}),
      ...(resultOwner !== undefined ? { resultOwner } : {}),
      argsRead: read,
      timeoutMs: input.timeout_ms ?? ASYNC_TIMEOUT_DEFAULT_MS,
      sealedArgs: await deps.sealer.seal(
        argsBinding(principal.tenantId, requestId),
        JSON.stringify({ args, viewer: grantsOf(principal) }),
      ),
      actor: actorOf(principal),
      ...(isHandedOut(principal) ? { handedOut: true as const } : {}),
      enqueuedAt: deps.clock.now().toISOString(),
    };
    await deps.jobQueue.enqueue(job);
    return { queued: true, requestId };
  }
  const reaction = await run(deps, reactor, formula, args, deps.config.syncReactTimeoutMs, {
    access: accessOf(principal),
    who: principal,
    handedOut: isHandedOut(principal),
  });
  return { queued: false, reaction };
}

/** The tenant's Standard Webhooks secret, created on first use and kept sealed. */
export function webhookSecrets(
  deps: ReactDeps,
): WebhookSecretSource & { rotate(principal: TenantPrincipal): Promise<string> } {
  const binding = webhookSecretBinding;
  const fresh = () => `whsec_${randomBytes(24).toString("base64")}`;
  return {
    async secret(tenantId) {
      const stored = await deps.reactors.webhookSecret(tenantId);
      if (stored) return deps.sealer.open(binding(tenantId), stored);
      const sealed = await deps.sealer.seal(binding(tenantId), fresh());
      return deps.sealer.open(
        binding(tenantId),
        await deps.reactors.putWebhookSecret(tenantId, sealed, { onlyIfAbsent: true }),
      );
    },
    async rotate(principal) {
      const secret = fresh();
      const audit = auditEvent(
        deps,
        principal,
        "tenant",
        principal.tenantId,
        "update",
        "Webhook secret rotated",
      );
      await deps.reactors.putWebhookSecret(
        principal.tenantId,
        await deps.sealer.seal(binding(principal.tenantId), secret),
        { onlyIfAbsent: false },
        audit,
      );
      return secret;
    },
  };
}
