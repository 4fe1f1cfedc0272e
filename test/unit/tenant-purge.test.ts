/**
 * The purge's pacing (tenant-purge.ts): nothing before the grace period ends, progress saved after each page so a
 * run cut short (its time limit, a crash) resumes where it was, and the tenant finished once its last page is done.
 */
import { describe, expect, it } from "vitest";
import { TestClock } from "#shared/adapters/clock.ts";
import type { LogEntry } from "#shared/domain/audit.ts";
import { purgeDeletedTenants } from "#shared/domain/tenant-purge.ts";
import type { PendingPurge, TenantPurgeStore } from "#shared/ports/tenant-deletion.ts";

/** A table of `pages` pages for one deleted tenant; each page read takes a second of the clock. */
function fakeStore(clock: TestClock, pages: number, notBefore: Date) {
  const state = {
    pending: [{ tenantId: "t-1", notBefore: notBefore.toISOString() }] as PendingPurge[],
    read: [] as (string | undefined)[],
    finished: [] as LogEntry[],
  };
  const store: TenantPurgeStore = {
    pending: async () => state.pending.map((p) => ({ ...p })),
    purgePage: async (_tenantId, cursor) => {
      state.read.push(cursor);
      clock.advance(1);
      const at = cursor === undefined ? 0 : Number(cursor);
      return at + 1 < pages ? { next: String(at + 1), deleted: 10 } : { deleted: 10 };
    },
    saveCursor: async (tenantId, cursor) => {
      for (const p of state.pending) if (p.tenantId === tenantId) p.cursor = cursor;
    },
    finish: async (tenantId, _at, audit) => {
      state.pending = state.pending.filter((p) => p.tenantId !== tenantId);
      state.finished.push(audit);
    },
  };
  return { store, state };
}

describe("purgeDeletedTenants", () => {
  it("waits for the grace period, stops at its time limit, resumes from the saved cursor and then finishes", async () => {
    const clock = new TestClock();
    const start = clock.now();
    const { store, state } = fakeStore(clock, 5, new Date(start.getTime() + 300_000));
    const deps = { tenantPurge: store, clock };

    const early = await purgeDeletedTenants(deps);
    clock.advance(300);
    const first = await purgeDeletedTenants(deps, new Date(clock.now().getTime() + 2_000));
    const second = await purgeDeletedTenants(deps);

    expect(early).toBe(0);
    expect(first).toBe(20);
    expect(state.read.slice(0, 2)).toEqual([undefined, "1"]);
    expect(second).toBe(30);
    expect(state.read.slice(2)).toEqual(["2", "3", "4"]);
    expect(state.pending).toEqual([]);
    expect(state.finished).toEqual([
      expect.objectContaining({
        tenant_id: "t-1",
        entity_type: "tenant",
        operation: "delete",
        actor_type: "system",
      }),
    ]);
  });
});
