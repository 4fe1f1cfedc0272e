import { randomUUID } from "node:crypto";
import { forbidden, notFound } from "#shared/domain/errors.ts";
import { countTokens } from "#shared/observability/count-tokens.ts";
import { METRIC } from "#shared/observability/metric-names.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import type { StoredTransaction, TransactionOperationRef, TransactionStore } from "#shared/ports/stores.ts";
import { evaluateAccess, type TokenRef } from "./access-rules.ts";
import { auditEvent } from "./audit-entry.ts";
import type { Authenticator } from "./authentication.ts";
import type { TenantPrincipal } from "./entities.ts";
import { outsideAnyRequest } from "./idempotency-scope.ts";
import { accessOf, requireAccess, type TokenAccess } from "./tokens/access.ts";
import type { StoredToken, TokenHold, TransactionContext } from "./tokens/token.ts";

/** An uncommitted transaction rolls back this long after it was opened. */
export const TRANSACTION_LIFETIME_SECONDS = 3600;

export interface TransactionDeps {
  transactions: TransactionStore;
  clock: Clock;
}

const isLive = (t: StoredTransaction, now: Date) =>
  t.state === "open" && Date.parse(t.expires_at) > now.getTime();

/**
 * The credential a transaction belongs to: the application key that opened it, or the session. Only that
 * credential may join, commit or roll it back; another key of the same application is another credential
 * (keys are what is handed out and revoked, and idempotency is scoped the same way).
 */
export function openerOf(principal: TenantPrincipal): string {
  return principal.kind === "session" ? `session:${principal.session.id}` : `key:${principal.keyId}`;
}

function view(t: StoredTransaction) {
  return {
    id: t.id,
    created_at: t.created_at,
    ...(t.created_by ? { created_by: t.created_by } : {}),
    expires_at: t.expires_at,
  };
}

export async function openTransaction(deps: TransactionDeps, principal: TenantPrincipal) {
  const now = deps.clock.now();
  const transaction: StoredTransaction = {
    id: randomUUID(),
    tenant_id: principal.tenantId,
    state: "open",
    created_by: principal.application.id,
    opened_by: openerOf(principal),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + TRANSACTION_LIFETIME_SECONDS * 1000).toISOString(),
  };
  await deps.transactions.create(
    transaction,
    auditEvent(deps, principal, "transaction", transaction.id, "create", "Transaction opened"),
  );
  return view(transaction);
}

/**
 * The open transaction a write joins through SVC-TRANSACTION-ID; unknown, finished, expired or another
 * credential's ones are 404.
 */
export async function joinTransaction(
  deps: TransactionDeps,
  principal: TenantPrincipal,
  id: string | undefined,
): Promise<TransactionContext | undefined> {
  if (id === undefined) return undefined;
  const transaction = await liveTransaction(deps, principal, id);
  return { id, expiresEpoch: Math.floor(Date.parse(transaction.expires_at) / 1000) };
}

/**
 * Whether the caller may hold existing tokens in `transaction`: the one check before any write locks a token.
 * A held token answers 409 to every other writer, the owner's own keys included, until the transaction ends
 * (up to TRANSACTION_LIFETIME_SECONDS, and a new transaction can take it again): for that long it is as good as
 * deleted to them. So holding takes `token:delete` on every container the write touches; a key that could
 * delete the token itself gains nothing by locking it. (Chosen over "delete-level access breaks a lock": an
 * open transaction's locks then hold against everyone, so its commit stays all-or-nothing.)
 */
export function holdTokens(
  access: TokenAccess,
  tokens: readonly TokenRef[],
  transaction: TransactionContext | undefined,
): TokenHold | undefined {
  if (!transaction) return undefined;
  for (const token of tokens)
    requireAccess(access, token, "token:delete", "needed to hold the token in a transaction");
  return transaction as TokenHold;
}

export interface HoldDeps {
  transactions: Pick<TransactionStore, "get" | "rollback" | "finishCommit">;
  /** Whether the key that opened a transaction still stands (authentication's own check of a key). */
  authenticator: Pick<Authenticator, "keyHolder">;
  clock: Clock;
  metrics: Metrics;
}

/**
 * A token still held by a transaction committed past its commit point whose request died before applying it
 * (a staged commit, `rolling_forward`): the committed versions are applied now, before a write starts from the
 * token as it is. Left to the sweep, the lock kept every writer out (409) until it lapsed, and once it had lapsed
 * a write replaced the old version and the roll-forward then skipped the token as written since: the committed
 * data lost (lost-tokens review, 28 Nov 2026). Applying is repeatable (each write is conditioned on the hold),
 * so the sweep or another write doing the same meanwhile changes nothing. True when it applied: the caller reads
 * the token again.
 */
export async function finishCommittedHold(deps: HoldDeps, token: StoredToken): Promise<boolean> {
  const { lock } = token;
  if (!lock || lock.operation === "create") return false;
  const transaction = await deps.transactions.get(token.tenant_id, lock.transactionId);
  if (transaction?.state !== "committed" || !transaction.rolling_forward) return false;
  // A continuation of that commit (as the sweep's), not an effect of the write that met it.
  await outsideAnyRequest(() =>
    deps.transactions.finishCommit(transaction, deps.clock.now(), (created) =>
      countTokens(deps, METRIC.tokensCreated, token.tenant_id, created),
    ),
  );
  return true;
}

/**
 * A lock lasts only while its holder could still delete the token itself (holdTokens checks it when the lock is
 * taken): a write that meets a token held by a transaction whose key was revoked since, or whose application
 * lost token:delete on the token's container, rolls that transaction back, all of it (a commit stays
 * all-or-nothing), and goes on. Costs nothing for a token no transaction holds. True when it released the lock.
 */
export async function releaseStaleHold(deps: HoldDeps, token: StoredToken): Promise<boolean> {
  const { lock } = token;
  const now = deps.clock.now();
  // A pending create (a chosen id, held since holdTokens asks token:delete of it too) is met by a create under
  // its id (createToken); updates and deletes never reach one (it is no live token).
  if (!lock || lock.expiresEpoch * 1000 <= now.getTime()) return false;
  const transaction = await deps.transactions.get(token.tenant_id, lock.transactionId);
  // A batch's hold is its running request's (POST /tokenize, a reactor's tokenize block): it commits or rolls back
  // within BATCH_REQUEST_SECONDS. Judged by its opener's key, which a batch's opener never names, a shopper's create
  // under one of a back end's staged ids rolled the whole import back and took the id (review round 12). Past its
  // answer-by (and the claims' grace) it can no longer commit (the commit's condition): its request died, and it is
  // rolled back here, its chosen ids free at once, not at its 15-minute expiry (stop 50's review).
  if (transaction?.opened_by?.startsWith("batch:")) {
    const diedBy = (transaction.answer_by ?? Number.POSITIVE_INFINITY) + BATCH_CLAIM_GRACE_SECONDS;
    if (transaction.state !== "open" || now.getTime() / 1000 <= diedBy) return false;
    return rolledBackBySystem(deps, transaction, "Batch rolled back: its request did not finish");
  }
  if (!transaction || !isLive(transaction, now) || (await holderMayDelete(deps, transaction, token)))
    return false;
  return rolledBackBySystem(
    deps,
    transaction,
    "Transaction rolled back: its key can no longer delete a token it held",
  );
}

/**
 * Rolls back a transaction whose hold a write met and may not wait on. Not an effect of that write: an idempotent
 * PATCH or DELETE that then fails must run again on its retry, not answer that it took effect (review round 26).
 */
function rolledBackBySystem(deps: HoldDeps, transaction: StoredTransaction, message: string) {
  const audit = auditEvent(
    deps,
    { tenantId: transaction.tenant_id, actor: { type: "system" } },
    "transaction",
    transaction.id,
    "update",
    message,
  );
  return outsideAnyRequest(() => deps.transactions.rollback(transaction, audit));
}

/**
 * Whether the key that opened `transaction` would still authenticate (Authenticator.keyHolder: a key of an
 * application or member whose deletion has begun no longer does) and its application may still delete `token`.
 */
async function holderMayDelete(deps: HoldDeps, transaction: StoredTransaction, token: StoredToken) {
  const keyId = transaction.opened_by?.startsWith("key:")
    ? transaction.opened_by.slice("key:".length)
    : undefined;
  const applicationId = transaction.created_by;
  // Sessions cannot open transactions, and records without an opener belong to no one: neither may hold.
  if (keyId === undefined || applicationId === undefined) return false;
  const application = await deps.authenticator.keyHolder(token.tenant_id, applicationId, keyId);
  return Boolean(application && evaluateAccess(application, token, "token:delete"));
}

/**
 * The open transaction `id` of the caller's own credential, the one check join, commit and rollback share.
 * Another credential's transaction (even of the same tenant and application) answers exactly like an unknown
 * one, 404, so a leaked id neither works nor confirms that the transaction exists. A record without an opener
 * (written before openers were recorded) belongs to no one and rolls back at its expiry.
 */
/** A transaction's id as this service makes them (randomUUID): nothing else names one. */
const TRANSACTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function liveTransaction(deps: TransactionDeps, principal: TenantPrincipal, id: string) {
  // Any other SVC-TRANSACTION-ID is no transaction: unchecked, 2,100 characters made a store key DynamoDB refuses
  // (a 500 on every transactional write: idempotency review, 28 Nov 2026).
  if (!TRANSACTION_ID.test(id)) throw notFound("The transaction");
  const transaction = await deps.transactions.get(principal.tenantId, id);
  if (
    !transaction ||
    !isLive(transaction, deps.clock.now()) ||
    transaction.opened_by === undefined ||
    transaction.opened_by !== openerOf(principal)
  )
    throw notFound("The transaction");
  return transaction;
}

export async function commitTransaction(
  deps: TransactionDeps & { metrics: Metrics },
  principal: TenantPrincipal,
  id: string,
): Promise<void> {
  const transaction = await liveTransaction(deps, principal, id);
  const access = accessOf(principal);
  // Judged by the commit on the operations it applies (transaction-store.ts commitOnce): judged on a read of its
  // own before the commit, a write joining in between landed unchecked (round-3 review).
  const committed = await deps.transactions.commit(
    transaction,
    deps.clock.now(),
    auditEvent(deps, principal, "transaction", id, "update", "Transaction committed"),
    (operations) => operations.every((op) => mayStill(access, op)),
    // Tokens created in a transaction count as its commit applies them (a rolled-back one created none).
    (created) => countTokens(deps, METRIC.tokensCreated, principal.tenantId, created),
  );
  if (committed === "refused") await refuseCommit(deps, principal, transaction);
  if (!committed || committed === "refused") throw notFound("The transaction");
}

/**
 * What an operation takes of its key's grant: as it took when it joined (tokens/create.ts, manage.ts, holdTokens),
 * reveal-level token:update included for an update that moves the token or changes a field evaluated on its data
 * (manage.ts revealChanges: it was left out, and a key narrowed to mask still committed its staged move).
 */
function mayStill(access: TokenAccess, op: TransactionOperationRef): boolean {
  if (op.operation === "create") return access.evaluate(op.token, "token:create") !== undefined;
  const tokens = op.next ? [op.token, op.next] : [op.token];
  const permissions =
    op.operation === "update" ? (["token:update", "token:delete"] as const) : (["token:delete"] as const);
  return tokens.every(
    (token) =>
      permissions.every((p) => access.evaluate(token, p) !== undefined) &&
      (!op.reveal || access.evaluate(token, "token:update") === "reveal"),
  );
}

/**
 * A commit applies only what its key could still write now: the grant may have narrowed since each operation
 * joined (an owner reining in an application it no longer trusts). Else the whole transaction rolls back (as a
 * hold whose holder can no longer delete the token does, releaseStaleHold) and the commit is a 403. The rollback is
 * no effect of the commit request: a retry finds the transaction closed (404), never a replayed success.
 */
async function refuseCommit(
  deps: TransactionDeps,
  principal: TenantPrincipal,
  transaction: StoredTransaction,
): Promise<never> {
  const message = "Transaction rolled back: its key may no longer make one of its writes";
  await outsideAnyRequest(() =>
    deps.transactions.rollback(
      transaction,
      auditEvent(deps, principal, "transaction", transaction.id, "update", message),
    ),
  );
  throw forbidden(
    "The key may no longer make every write of this transaction (its permissions changed since): rolled back.",
  );
}

export async function rollbackTransaction(
  deps: TransactionDeps,
  principal: TenantPrincipal,
  id: string,
): Promise<void> {
  const transaction = await liveTransaction(deps, principal, id);
  const rolledBack = await deps.transactions.rollback(
    transaction,
    auditEvent(deps, principal, "transaction", id, "update", "Transaction rolled back"),
  );
  if (!rolledBack) throw notFound("The transaction");
}

/** The sweep's rollback of a transaction left open past its expiry. */
export async function rollbackExpired(
  deps: TransactionDeps & { metrics: Metrics },
  tenantId: string,
  id: string,
  again = true,
): Promise<boolean> {
  const transaction = await deps.transactions.get(tenantId, id);
  // Committed past its commit point by a request that died before applying it all: finished, never undone. The
  // request counted none of its tokens (it counts after applying them all), so they count here.
  if (transaction?.state === "committed" && transaction.rolling_forward) {
    await deps.transactions.finishCommit(transaction, deps.clock.now(), (created) =>
      countTokens(deps, METRIC.tokensCreated, tenantId, created),
    );
    return false;
  }
  // Rolled back in stages by a request that died before undoing it all: undone now, each reservation given back.
  const system = { tenantId, actor: { type: "system" as const } };
  if (transaction?.state === "rolled_back" && transaction.rolling_back) {
    const message = "Transaction rollback finished at its expiry (its request stopped midway)";
    await deps.transactions.finishRollback(
      transaction,
      auditEvent(deps, system, "transaction", id, "update", message),
    );
    return false;
  }
  if (!transaction) {
    // Its record gone (its TTL ran before its operation items'): nothing can commit what they staged; undone as
    // a rollback, each reservation given back, so no token stays held by an item nothing would ever remove.
    // It may have committed (its request dying before forgetting its items): only what it still holds is undone.
    const message = "Operations of a transaction whose record is gone rolled back";
    await deps.transactions.undoOrphan(
      tenantId,
      id,
      auditEvent(deps, system, "transaction", id, "update", message),
    );
    return false;
  }
  if (transaction.state !== "open") {
    // Closed by a request that died before removing its operations: their sealed copies go now. A committed one's
    // request may have died before moving their claims (a value changed by an update deduplicated to a second
    // token for good): moved first.
    if (transaction.state === "committed") await deps.transactions.settleCommitted(tenantId, id);
    else await deps.transactions.forgetOperations(tenantId, id);
    return false;
  }
  const audit = auditEvent(
    deps,
    system,
    "transaction",
    id,
    "update",
    "Transaction rolled back at its expiry",
  );
  if (await deps.transactions.rollback(transaction, audit, { expired: true })) return true;
  // Closed since it was read: a commit whose request read its clock just before the expiry landed after this
  // read. What that request leaves unfinished (it may die midway) is finished now, from the record as it is:
  // this is the transaction's last due item.
  return again ? rollbackExpired(deps, tenantId, id, false) : false;
}

/**
 * A batch (POST /tokenize) lives at most this long: past it the sweep rolls back what a request that died left
 * pending, or finishes what it committed. As long as a function may run (Lambda's 15 minutes), so no running
 * request sees its batch expire under it.
 */
export const BATCH_LIFETIME_SECONDS = 900;

/**
 * A batch is committed or rolled back by the request that opened it, which no host lets run this long (API
 * functions time out at 28 s): past it, the request died and its pending creates hold nothing (token-store.ts).
 */
export const BATCH_REQUEST_SECONDS = 30;

/**
 * How long past its answer-by a batch's pending creates still hold their values: a commit that read its clock
 * just before the answer-by lands later, and must not meet a value already taken over (two tokens for one).
 */
export const BATCH_CLAIM_GRACE_SECONDS = 30;

/**
 * Opens the transaction a batch's writes go through, so they become visible all at once or not at all. It
 * belongs to no caller's credential (`batch:` never equals an opener), so no transaction route can join, commit
 * or roll it back: only the request that opened it.
 */
export async function openBatch(
  deps: TransactionDeps,
  principal: TenantPrincipal,
  size: number,
): Promise<{ record: StoredTransaction; context: TransactionContext }> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + BATCH_LIFETIME_SECONDS * 1000);
  const batchAnswerBy = Math.floor(now.getTime() / 1000) + BATCH_REQUEST_SECONDS;
  const record: StoredTransaction = {
    id: randomUUID(),
    tenant_id: principal.tenantId,
    state: "open",
    created_by: principal.application.id,
    opened_by: `batch:${openerOf(principal)}`,
    created_at: now.toISOString(),
    expires_at: expiresAt.toISOString(),
    answer_by: batchAnswerBy,
  };
  await deps.transactions.create(
    record,
    auditEvent(deps, principal, "transaction", record.id, "create", `Batch of ${size} token requests opened`),
  );
  const expiresEpoch = Math.floor(expiresAt.getTime() / 1000);
  return { record, context: { id: record.id, expiresEpoch, batchAnswerBy } };
}

/** Commits a batch; false when it expired or closed first (then nothing of it is visible). */
export async function commitBatch(
  deps: TransactionDeps & { metrics: Metrics },
  principal: TenantPrincipal,
  record: StoredTransaction,
): Promise<boolean> {
  const committed = await deps.transactions.commit(
    record,
    deps.clock.now(),
    auditEvent(deps, principal, "transaction", record.id, "update", "Batch committed"),
    undefined,
    // Counted as the commit applies them: a roll-forward failing midway has counted the chunks it applied.
    (created) => countTokens(deps, METRIC.tokensCreated, principal.tenantId, created),
  );
  return committed !== false && committed !== "refused";
}

/** Rolls a batch back after one of its requests failed: nothing of it was ever visible, nothing stays. */
export async function rollbackBatch(
  deps: TransactionDeps,
  principal: TenantPrincipal,
  record: StoredTransaction,
): Promise<void> {
  await deps.transactions.rollback(
    record,
    auditEvent(deps, principal, "transaction", record.id, "update", "Batch rolled back"),
  );
}
