import type { Clock } from "#shared/ports/clock.ts";
import type { TenantPurgeStore } from "#shared/ports/tenant-deletion.ts";
import { auditEntry } from "./audit-entry.ts";

/**
 * Pages (of up to 1 MB of the table each) one sweep run purges at most, besides its time limit; a purge cut
 * short resumes at its saved cursor on the next run (docs/security.md, "Tenant deletion": the rate and the
 * deadline).
 */
export const PURGE_PAGES_PER_RUN = 5_000;

/**
 * The sweep's part in tenant deletion: every deleted tenant whose grace period is over loses its items, page
 * by page, its progress saved after each page, until `stopBy` (the clock's time) or PURGE_PAGES_PER_RUN.
 * Answers how many items were removed.
 */
export async function purgeDeletedTenants(
  deps: { tenantPurge: TenantPurgeStore; clock: Clock },
  stopBy?: Date,
  maxPages = PURGE_PAGES_PER_RUN,
): Promise<number> {
  const now = deps.clock.now();
  let pages = 0;
  let removed = 0;
  // Earliest deletion first (every receipt's deadline is its deletion + 1 h): the store lists them by tenant id,
  // and a tenant with a lower id deleted later took every run's purge time (review of 27 Nov 2026).
  const due = (await deps.tenantPurge.pending()).filter((p) => Date.parse(p.notBefore) <= now.getTime());
  due.sort((a, b) => Date.parse(a.notBefore) - Date.parse(b.notBefore) || (a.tenantId < b.tenantId ? -1 : 1));
  for (const purge of due) {
    let cursor = purge.cursor;
    while (pages < maxPages && (!stopBy || deps.clock.now().getTime() < stopBy.getTime())) {
      pages += 1;
      const page = await deps.tenantPurge.purgePage(purge.tenantId, cursor);
      removed += page.deleted;
      if (!page.next) {
        const system = { type: "system" as const };
        await deps.tenantPurge.finish(
          purge.tenantId,
          deps.clock.now().toISOString(),
          auditEntry(deps.clock.now(), system, {
            tenantId: purge.tenantId,
            entityType: "tenant",
            entityId: purge.tenantId,
            operation: "delete",
            message: "Every item of the deleted tenant purged",
          }),
        );
        break;
      }
      cursor = page.next;
      await deps.tenantPurge.saveCursor(purge.tenantId, cursor);
    }
  }
  return removed;
}
