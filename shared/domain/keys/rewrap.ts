import { auditEvent, recordEvents, tokenEvent } from "#shared/domain/audit-entry.ts";
import type { TenantPrincipal } from "#shared/domain/entities.ts";
import { conflict, DomainError, notFound } from "#shared/domain/errors.ts";
import { tenantBucket } from "#shared/domain/rate-limit.ts";
import type { TokenDeps } from "#shared/domain/tokens/deps.ts";
import { renderField } from "#shared/domain/tokens/expression-checks.ts";
import { fingerprintOf, openData, sealData, splitCvc } from "#shared/domain/tokens/sealing.ts";
import { searchHashesOf } from "#shared/domain/tokens/search-hash.ts";
import type { StoredToken } from "#shared/domain/tokens/token.ts";
import { uuidv7 } from "#shared/ids.ts";
import type { JobQueue } from "#shared/ports/job-queue.ts";
import type { RewrapJob, RewrapJobStore, RewrapPageMessage } from "#shared/ports/key-versions.ts";
import { dataKeyId, hmacKeyId, keyRefsOf } from "./key-refs.ts";
import { currentKeys, type KeyDeps } from "./key-versions.ts";
import { type LongLivedDeps, resealLongLived } from "./long-lived.ts";
import { retireHmacVersions } from "./retire.ts";

export interface RewrapJobDeps extends KeyDeps, Pick<LongLivedDeps, "proxies" | "reactors"> {
  rewrapJobs: RewrapJobStore;
  rewrapQueue: JobQueue<RewrapPageMessage>;
}

/** The worker's: the token domain too (it opens, seals and hashes). */
export interface RewrapDeps extends TokenDeps, RewrapJobDeps {}

/** Tokens per page (one job message): each is one re-seal write, so a page stays well inside a function's time. */
export const REWRAP_PAGE_SIZE = 25;
/**
 * A running job whose pages have not moved it on for this long has stalled (its page went to the dead-letter queue
 * after SQS's five receives, 15 minutes at most): a new start takes over. Until then a tenant runs one job.
 */
export const REWRAP_STALL_MS = 30 * 60_000;
/** A refused start sends a running job's current page again after this long without progress. */
const REWRAP_RESEND_MS = 60_000;
/** Re-seal writes of a page in flight at once. */
const RESEALS_IN_FLIGHT = 10;
/** A token changed under a re-seal this many times in a row is left for a later rewrap. */
const RESEAL_ATTEMPTS = 4;

export interface RewrapView {
  id: string;
  status: RewrapJob["status"];
  total: number;
  done: number;
  skipped: number;
  created_at: string;
  finished_at?: string;
}

const jobView = (job: RewrapJob): RewrapView => ({
  id: job.id,
  status: job.status,
  total: job.total,
  done: job.done,
  skipped: job.skipped,
  created_at: job.created_at,
  ...(job.finished_at ? { finished_at: job.finished_at } : {}),
});

const system = (tenantId: string) => ({ tenantId, actor: { type: "system" as const } });

/**
 * POST /tenants/self/keys/rewrap: a job that re-seals every token of the tenant under the current key versions,
 * a page per job message. `total` is the tenant's counted tokens when it starts; `done` those checked so far.
 * One job per tenant at a time (409 while one runs): each start costs a pass over every token, so starts must not
 * multiply that work. A job that stalled (REWRAP_STALL_MS without progress) ends `failed` when a new one starts.
 */
export async function startRewrap(deps: RewrapJobDeps, principal: TenantPrincipal): Promise<RewrapView> {
  const { tenantId } = principal;
  const now = deps.clock.now();
  const previous = await deps.rewrapJobs.latest(tenantId);
  const sinceProgress = previous && now.getTime() - Date.parse(previous.progressed_at ?? previous.created_at);
  if (previous?.status === "running" && Number(sinceProgress) < REWRAP_STALL_MS) {
    // Its current page sent again once a minute has passed without progress (a re-delivery is harmless; sooner
    // would let a stream of starts re-read pages): a start that died between the job's write and its first message
    // left a job no message drives, and this goes on with it.
    if (Number(sinceProgress) >= REWRAP_RESEND_MS)
      await deps.rewrapQueue.enqueue({ kind: "rewrap", tenantId, jobId: previous.id, page: previous.page });
    throw conflict(
      `A rewrap of this tenant is running (${previous.id}); follow it with GET /tenants/self/keys/rewrap/${previous.id}.`,
    );
  }
  const { records } = await currentKeys(deps, tenantId);
  const total = records
    .filter((r) => /^k\d+$/.test(r.keyId) && !r.destroyedAt)
    .reduce((sum, r) => sum + Math.max(0, r.tokens), 0);
  const job: RewrapJob = {
    id: uuidv7(now),
    tenant_id: tenantId,
    status: "running",
    total,
    done: 0,
    skipped: 0,
    page: 0,
    sent: 0,
    created_at: now.toISOString(),
    progressed_at: now.toISOString(),
  };
  const taken = previous?.status === "running" ? `, taking over from stalled rewrap ${previous.id}` : "";
  const started = await deps.rewrapJobs.create(
    job,
    auditEvent(
      deps,
      principal,
      "tenant_key",
      `rewrap:${job.id}`,
      "update",
      `Rewrap of every token started${taken}`,
    ),
    previous,
  );
  if (!started) throw conflict("Another rewrap of this tenant started meanwhile.");
  await deps.rewrapQueue.enqueue({ kind: "rewrap", tenantId, jobId: job.id, page: 0 });
  return jobView(job);
}

/** GET /tenants/self/keys/rewrap/{id}. */
export async function getRewrap(
  deps: RewrapJobDeps,
  principal: TenantPrincipal,
  id: string,
): Promise<RewrapView> {
  const job = await deps.rewrapJobs.get(principal.tenantId, id);
  if (!job) throw notFound("The rewrap job");
  await recordEvents(deps, [
    auditEvent(deps, principal, "tenant_key", `rewrap:${job.id}`, "read", "Rewrap progress read"),
  ]);
  return jobView(job);
}

/**
 * The worker: one page of a job. Re-delivery is harmless: a page whose progress is already stored only makes
 * sure the job goes on (the next message sent, or the job finished), and tokens already under the current
 * versions are passed over. Each re-seal is a conditional write on the token's version, so a token changed
 * meanwhile keeps its newer seal (it is read again, and re-sealed only if still needed).
 */
export async function processRewrapPage(deps: RewrapDeps, message: RewrapPageMessage): Promise<void> {
  const job = await deps.rewrapJobs.get(message.tenantId, message.jobId);
  if (job?.status !== "running") return;
  if (message.page !== job.page) {
    // This page's progress was stored, and the worker stopped before going on: go on now.
    if (message.page === job.page - 1 && job.sent < job.page) await goOn(deps, job);
    return;
  }
  if (job.end) return goOn(deps, job);
  // Read fresh for each page: a rotation while the job runs moves the rest of it to the newer versions.
  deps.keyState.evict(job.tenant_id);
  const [dataVersion, state] = await Promise.all([
    deps.keyring.currentVersion(job.tenant_id),
    deps.keyVersions.state(job.tenant_id),
  ]);
  const target = new Set([dataKeyId(dataVersion), hmacKeyId(state.hmacVersion)]);
  const { items, next } = await deps.tokens.page(
    job.tenant_id,
    { now: deps.clock.now() },
    REWRAP_PAGE_SIZE,
    job.cursor,
  );
  // Each token's renders (its fingerprint and search indexes again) as a request's: one budget, drawn from the
  // tenant's share, in turn with other tenants (render-budget.ts). Unscoped, they had a budget per call and no
  // share, so a tenant whose share was spent had all its tokens' expressions rendered again at every rewrap. A
  // spent share fails the page (rate-limited), which comes back later, as a failed page does.
  const scoped = (): RewrapDeps => ({
    ...deps,
    expressions: deps.expressions.forRequest(tenantBucket(job.tenant_id)),
  });
  let skipped = 0;
  for (let i = 0; i < items.length; i += RESEALS_IN_FLIGHT) {
    const outcomes = await Promise.all(
      items.slice(i, i + RESEALS_IN_FLIGHT).map((token) => reseal(scoped(), job, token, target, dataVersion)),
    );
    skipped += outcomes.filter((outcome) => outcome === "held" || outcome === "unrenderable").length;
  }
  const progress = { done: job.done + items.length, skipped: job.skipped + skipped };
  const advanced = await deps.rewrapJobs.advance(job.tenant_id, job.id, job.page, {
    ...(next !== undefined ? { cursor: next } : {}),
    ...progress,
    at: deps.clock.now(),
  });
  // Another delivery of this page stored it first: that one goes on.
  if (!advanced) return;
  await goOn(deps, { ...job, ...progress, page: job.page + 1, end: next === undefined });
}

/** After a page: the next page's message, or, after the last, the job's end. */
async function goOn(deps: RewrapDeps, job: RewrapJob): Promise<void> {
  if (job.end) {
    // The tenant's other long-lived sealed values (proxy keys, proxies' and reactors' configurations, webhook
    // secret) move on with its tokens.
    deps.keyState.evict(job.tenant_id);
    const dataVersion = await deps.keyring.currentVersion(job.tenant_id);
    await resealLongLived(
      deps,
      job.tenant_id,
      dataKeyId(dataVersion),
      `re-sealed under key version ${dataVersion} (rewrap ${job.id})`,
    );
    await retireHmacVersions(deps, job.tenant_id, job.id);
    await deps.rewrapJobs.finish(
      job.tenant_id,
      job.id,
      "succeeded",
      auditEvent(
        deps,
        system(job.tenant_id),
        "tenant_key",
        `rewrap:${job.id}`,
        "update",
        `Rewrap finished: ${job.done} tokens checked, ${job.skipped} left (held by open transactions, or no longer rendering their expressions)`,
      ),
      deps.clock.now(),
    );
    return;
  }
  await deps.rewrapQueue.enqueue({ kind: "rewrap", tenantId: job.tenant_id, jobId: job.id, page: job.page });
  await deps.rewrapJobs.markSent(job.tenant_id, job.id, job.page);
}

type ResealOutcome = "resealed" | "current" | "held" | "unrenderable" | "gone";

async function reseal(
  deps: RewrapDeps,
  job: RewrapJob,
  listed: StoredToken,
  target: Set<string>,
  dataVersion: number,
): Promise<ResealOutcome> {
  for (let attempt = 0; attempt < RESEAL_ATTEMPTS; attempt++) {
    const token = attempt === 0 ? listed : await deps.tokens.get(job.tenant_id, listed.id);
    if (!token) return "gone";
    if (keyRefsOf(token).every((ref) => target.has(ref))) return "current";
    // Held, or its hold lapsed with its transaction not yet finished with it: a commit past its commit point whose
    // roll-forward the sweep has still to make (its staged version, not this one, is the token's), or an expired
    // transaction still to roll back. Re-sealing this version would write the old data back over a committed
    // update (the roll-forward then skips a token written since). Left for a later rewrap: the sweep ends the hold.
    if (token.lock) return "held";
    let next: StoredToken;
    try {
      next = await resealed(deps, token);
    } catch (error) {
      // Its fingerprint or a search index no longer renders on its data as it opens now (its cvc's hour is over,
      // say): left as it is, under the keys it needs and is counted under (so none of them is destroyed), for the
      // tenant to fix. One such token must not fail its page, and so every rewrap, for good.
      if (error instanceof DomainError && error.kind === "invalid") return "unrenderable";
      throw error;
    }
    const outcome = await deps.tokens.replace(
      next,
      token.version,
      tokenEvent(
        deps,
        system(job.tenant_id),
        token,
        "update",
        `Token re-sealed under key version ${dataVersion} (rewrap ${job.id})`,
      ),
      {
        now: deps.clock.now(),
        previous: token,
        previousFingerprint: token.fingerprint,
        ...(token.search_hashes ? { previousSearchHashes: token.search_hashes } : {}),
      },
    );
    if (outcome === "ok") return "resealed";
  }
  return "held";
}

/**
 * The token under the current versions: data (and a cvc still readable, keeping its hour) sealed again, its
 * fingerprint and search hashes computed again; a new version, so a write that read the old one is refused.
 */
async function resealed(deps: TokenDeps, token: StoredToken): Promise<StoredToken> {
  const data = await openData(deps, token);
  const next: StoredToken = { ...token, version: token.version + 1, reseals: (token.reseals ?? 0) + 1 };
  delete next.lock;
  delete next.sealed_cvc;
  delete next.cvc_expires_at;
  // The token's own data as it opens: sealed again as it is, not held to the limits of a write (sealData).
  const sealed = await sealData(deps, token.tenant_id, token.id, token.type, data, { stored: true });
  Object.assign(next, sealed);
  if (sealed.sealed_cvc) next.cvc_expires_at = token.cvc_expires_at;
  const rendered = await renderField(
    deps,
    "fingerprint_expression",
    token.fingerprint_expression,
    splitCvc(token.type, data).rest,
    {
      dataDependent: true,
    },
  );
  next.fingerprint = await fingerprintOf(
    deps,
    token.tenant_id,
    token.type,
    token.fingerprint_expression,
    rendered,
  );
  if (token.search_indexes?.length)
    next.search_hashes = await searchHashesOf(
      deps,
      { tenantId: token.tenant_id, type: token.type, indexes: token.search_indexes, data },
      (field, expression, value) => renderField(deps, field, expression, value, { dataDependent: true }),
    );
  return next;
}
