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
 * A table created at `now` holds nothing that fell due before: its first sweep starts at `now`'s hour instead of
 * looking back SWEEP_LOOKBACK_HOURS (49 hours × every due shard of reads, for nothing).
 */
export async function startSweepsAt(deps: Pick<SweepDeps, "sweep">, now: Date): Promise<void> {
  await deps.sweep.setLastCompletedHour(new Date(hourOf(now).getTime() - HOUR).toISOString());
}

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

/**
 * The due items of every hour since the last completed one, until `stopBy`. Each shard is walked through those
 * hours on its own, the shards served in turn (sweepHours): an hour is completed once every shard is past it.
 * Before, hour by hour, each to its end: one tenant's backlog of an earlier hour held every other tenant's items of
 * every later hour out of each time-limited run, whatever their shards (review of 28 Nov 2026).
 */
async function sweepDue(deps: SweepDeps, now: Date, result: SweepResult, stopBy?: Date): Promise<void> {
  const current = hourOf(now);
  const last = await deps.sweep.lastCompletedHour();
  const lookback = new Date(current.getTime() - SWEEP_LOOKBACK_HOURS * HOUR);
  const hours: Date[] = [];
  let hour = last ? new Date(Math.max(Date.parse(last) + HOUR, lookback.getTime())) : lookback;
  for (; hour.getTime() <= current.getTime(); hour = new Date(hour.getTime() + HOUR)) hours.push(hour);
  const stopped = () => stopBy !== undefined && deps.clock.now().getTime() >= stopBy.getTime();
  const finished = await sweepHours(deps, hours, now, result, stopped);
  result.hoursScanned += finished;
  const completed = hours.slice(0, finished).filter((h) => h.getTime() < current.getTime());
  const latest = completed.at(-1);
  if (latest) await deps.sweep.setLastCompletedHour(latest.toISOString());
}

/**
 * `hours`' due items, one of each shard in turn (a page of each at a time), each shard's hour by hour and, in an
 * hour, in the order they fell due (sweep-index.ts), until `stopped`; how many of the hours every shard finished. A
 * tenant's items are all in one shard, so tenants are served in turn: one tenant's backlog holds up only those
 * sharing its shard, in its hour and the later ones alike. Before 28 Nov 2026, earliest due first across all
 * shards: a tenant's flood of items falling due a second sooner held every other tenant's out of each time-limited
 * run until it was gone (DoS review); before 27 Nov, shard by shard, by kind then tenant id.
 */
async function sweepHours(
  deps: SweepDeps,
  hours: Date[],
  now: Date,
  result: SweepResult,
  stopped: () => boolean,
): Promise<number> {
  if (hours.length === 0) return 0;
  const first = hours[0] as Date;
  const shards = await Promise.all(
    Array.from({ length: deps.sweep.shards }, async (_, shard) => ({
      shard,
      /** Index in `hours` of the hour being read (hours.length: past every one). */
      hour: 0,
      at: 0,
      ...(await deps.sweep.due(first, shard)),
    })),
  );
  type Shard = (typeof shards)[number];
  /** One read on for a shard that has run out of items: its next page, else its next hour's first. */
  const readOn = async (shard: Shard) => {
    const next = shard.next;
    if (!next) shard.hour += 1;
    if (shard.hour >= hours.length) return;
    Object.assign(
      shard,
      { at: 0, next: undefined },
      await deps.sweep.due(hours[shard.hour] as Date, shard.shard, next),
    );
  };
  const runOut = (shard: Shard) => shard.at >= shard.items.length && shard.hour < hours.length;
  const finished = () => Math.min(...shards.map((shard) => shard.hour));
  let turn = 0;
  for (;;) {
    // Every shard that ran out reads on, together (an empty shard's hours one read each, as before 28 Nov).
    for (let waiting = shards.filter(runOut); waiting.length > 0; waiting = shards.filter(runOut))
      await Promise.all(waiting.map(readOn));
    let next: DueItem | undefined;
    for (let i = 0; i < shards.length && !next; i++) {
      const shard = shards[(turn + i) % shards.length] as Shard;
      next = shard.items[shard.at];
      if (next) {
        shard.at += 1;
        turn = (turn + i + 1) % shards.length;
      }
    }
    if (!next) return hours.length;
    if (stopped()) return finished();
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
