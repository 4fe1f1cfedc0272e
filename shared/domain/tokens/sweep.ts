import type { LogEntry } from "#shared/domain/audit.ts";
import { tokenEvent } from "#shared/domain/audit-entry.ts";
import type { Clock } from "#shared/ports/clock.ts";
import type { Metrics } from "#shared/ports/metrics.ts";
import type { SessionStore } from "#shared/ports/session-store.ts";
import type { DueItem, SweepStore } from "#shared/ports/sweep-store.ts";
import type { TenantPurgeStore } from "#shared/ports/tenant-deletion.ts";
import { purgeDeletedTenants } from "../tenant-purge.ts";
import { rollbackExpired, type TransactionDeps } from "../transactions.ts";

export interface SweepDeps extends TransactionDeps {
  /** TokensCreated of batches the sweep finishes (transactions.ts rollbackExpired). */
  metrics: Metrics;
  sweep: SweepStore;
  sessions: Pick<SessionStore, "removeExpired">;
  /** Deleted tenants whose items are still to remove (tenant-purge.ts). */
  tenantPurge: TenantPurgeStore;
  clock: Clock;
}

export interface SweepResult {
  tokensDeleted: number;
  cvcsRemoved: number;
  hoursScanned: number;
  /** Items of deleted tenants removed. */
  tenantItemsPurged: number;
  /** Due items that failed and were put off (`itemFailures`: the errors' kinds, never their messages). */
  itemsPutOff: number;
  itemFailures: string[];
}

const HOUR = 3_600_000;
/** A first sweep (or one after a long outage) looks back this far; DynamoDB TTL covers anything older. */
export const SWEEP_LOOKBACK_HOURS = 48;
/**
 * How soon a due item that failed is tried again: 15 minutes, doubled at each failure up to 12 hours, so an
 * item that keeps failing (a bug, a corrupt item) costs a few tries a day, not four an hour.
 */
const FAILED_ITEM_RETRY_SECONDS = 900;
const FAILED_ITEM_RETRY_MAX_SECONDS = 12 * 3600;

const hourOf = (date: Date) => new Date(Math.floor(date.getTime() / HOUR) * HOUR);

/**
 * Deletes expired tokens and removes cvcs past their hour, and purges deleted tenants. Walks hour buckets from
 * the last completed one up to the current hour, so each run reads only what fell due since the previous run.
 * Run every 15 minutes (AWS) or every minute and whenever the test clock moves (local), tokens are gone well
 * within the hour.
 *
 * With `stopBy` (the sweep function's own time limit, less a margin), the purge of deleted tenants goes first
 * with at most half of the time, the due items then until `stopBy` (an unfinished hour is taken up again by the
 * next run), and the purge again with what is left: neither holds the other off. Before, the purge came after
 * every due item, and one tenant's 2,000 expiring tokens kept another tenant's purge from starting in a run.
 */
export async function sweepExpired(deps: SweepDeps, options: { stopBy?: Date } = {}): Promise<SweepResult> {
  const now = deps.clock.now();
  const { stopBy } = options;
  const result: SweepResult = {
    tokensDeleted: 0,
    cvcsRemoved: 0,
    hoursScanned: 0,
    tenantItemsPurged: 0,
    itemsPutOff: 0,
    itemFailures: [],
  };
  const half = stopBy && new Date(now.getTime() + Math.max(0, stopBy.getTime() - now.getTime()) / 2);
  result.tenantItemsPurged += await purgeDeletedTenants(deps, half);
  await sweepDue(deps, now, result, stopBy);
  if (stopBy) result.tenantItemsPurged += await purgeDeletedTenants(deps, stopBy);
  return result;
}

/** The due items of every hour since the last completed one, until `stopBy`. */
async function sweepDue(deps: SweepDeps, now: Date, result: SweepResult, stopBy?: Date): Promise<void> {
  const current = hourOf(now);
  const last = await deps.sweep.lastCompletedHour();
  const lookback = new Date(current.getTime() - SWEEP_LOOKBACK_HOURS * HOUR);
  let hour = last ? new Date(Math.max(Date.parse(last) + HOUR, lookback.getTime())) : lookback;
  const stopped = () => stopBy !== undefined && deps.clock.now().getTime() >= stopBy.getTime();
  for (; hour.getTime() <= current.getTime(); hour = new Date(hour.getTime() + HOUR)) {
    if (!(await sweepHour(deps, hour, now, result, stopped))) return;
    result.hoursScanned += 1;
    if (hour.getTime() < current.getTime()) await deps.sweep.setLastCompletedHour(hour.toISOString());
  }
}

/**
 * An hour's due items, one of each shard in turn (a page of each at a time), each shard's in the order they fell
 * due (sweep-index.ts), until `stopped`; whether the hour was finished. A tenant's items are all in one shard, so
 * tenants are served in turn: one tenant's backlog holds up only those sharing its shard. Before 28 Nov 2026,
 * earliest due first across all shards: a tenant's flood of items falling due a second sooner held every other
 * tenant's out of each time-limited run until it was gone (DoS review); before 27 Nov, shard by shard, by kind
 * then tenant id.
 */
async function sweepHour(
  deps: SweepDeps,
  hour: Date,
  now: Date,
  result: SweepResult,
  stopped: () => boolean,
): Promise<boolean> {
  const shards = await Promise.all(
    Array.from({ length: deps.sweep.shards }, async (_, shard) => ({
      shard,
      at: 0,
      ...(await deps.sweep.due(hour, shard)),
    })),
  );
  let turn = 0;
  for (;;) {
    let next: DueItem | undefined;
    for (let i = 0; i < shards.length && !next; i++) {
      const shard = shards[(turn + i) % shards.length] as (typeof shards)[number];
      while (shard.at >= shard.items.length && shard.next) {
        Object.assign(shard, { at: 0, next: undefined }, await deps.sweep.due(hour, shard.shard, shard.next));
      }
      next = shard.items[shard.at];
      if (next) {
        shard.at += 1;
        turn = (turn + i + 1) % shards.length;
      }
    }
    if (!next) return true;
    if (stopped()) return false;
    const item = next;
    try {
      await sweepItem(deps, item, now, result);
    } catch (error) {
      // One item that fails (whatever its tenant) must not hold up every item due after it, for every tenant,
      // at every run: it is put off and retried later. If the store itself is down, putting it off fails too
      // and the run stops there, as before.
      const attempts = (item.attempts ?? 0) + 1;
      const wait = Math.min(FAILED_ITEM_RETRY_SECONDS * 2 ** (attempts - 1), FAILED_ITEM_RETRY_MAX_SECONDS);
      await deps.sweep.defer(item, new Date(now.getTime() + wait * 1000), attempts);
      result.itemsPutOff += 1;
      result.itemFailures.push(error instanceof Error ? error.name : "unknown");
    }
  }
}

async function sweepItem(deps: SweepDeps, item: DueItem, now: Date, result: SweepResult): Promise<void> {
  if (Date.parse(item.dueAt) > now.getTime()) return; // later in this hour: next run
  if (item.kind === "S") {
    // tokenId holds the session id for S entries; an extended session stays until its new expiry entry.
    await deps.sessions.removeExpired(item.tenantId, item.tokenId, now);
    await deps.sweep.done(item);
    return;
  }
  if (item.kind === "X") {
    // tokenId holds the transaction id for X entries.
    await rollbackExpired(deps, item.tenantId, item.tokenId);
    await deps.sweep.done(item);
    return;
  }
  if (item.kind === "C") {
    await deps.sweep.removeCvc(item, now);
    await deps.sweep.done(item);
    result.cvcsRemoved += 1;
    return;
  }
  let deleted = await deps.sweep.expireToken(item, now, expiryAudit(deps, item));
  // Its lock lapsed with its transaction unfinished (a staged commit whose request died past its commit point,
  // its X entry not yet run or put off): finished first, as its X entry would (a commit's version may extend
  // or clear the expiry), then looked at again. A failure here puts this entry off, the token kept.
  if (deleted && "heldUntil" in deleted && deleted.transactionId !== undefined) {
    await rollbackExpired(deps, item.tenantId, deleted.transactionId);
    deleted = await deps.sweep.expireToken(item, now, expiryAudit(deps, item));
  }
  // Held by an open transaction: looked at again a second after the hold ends (after its rollback, due then).
  if (deleted && "heldUntil" in deleted)
    await deps.sweep.defer(item, new Date(deleted.heldUntil.getTime() + 1000));
  else if (deleted) {
    await deps.sweep.releaseFingerprint(item.tenantId, deleted.type, deleted.fingerprint, item.tokenId);
    result.tokensDeleted += 1;
  } else await deps.sweep.done(item);
}

function expiryAudit(deps: { clock: Clock }, item: DueItem): LogEntry {
  const system = { tenantId: item.tenantId, actor: { type: "system" as const } };
  const token = { id: item.tokenId, type: item.tokenType };
  return tokenEvent(deps, system, token, "delete", "Token deleted after it expired");
}
