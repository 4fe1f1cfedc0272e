/**
 * The local job queue's ready jobs, by tenant, served as SQS fair queues serve message groups (the tenant is the
 * MessageGroupId in AWS): the next job is the oldest of the tenant with the fewest jobs running, and no tenant
 * runs more than `perTenant` at once. So one tenant's backlog, or its slow jobs, never holds another tenant's
 * job behind them: while another tenant waits, a worker is free or frees up for it first.
 */
export class FairReadyList<E> {
  private readonly byTenant = new Map<string, { order: number; entry: E }[]>();
  private readonly runningBy = new Map<string, number>();
  private order = 0;
  private count = 0;

  constructor(private readonly perTenant: number) {}

  /** Jobs ready, not running. */
  get length(): number {
    return this.count;
  }

  push(tenant: string, entry: E): void {
    const list = this.byTenant.get(tenant) ?? [];
    list.push({ order: this.order++, entry });
    this.byTenant.set(tenant, list);
    this.count += 1;
  }

  /** The next job to run, counted running for its tenant until `done(tenant)`; none when none may run now. */
  take(): { tenant: string; entry: E } | undefined {
    let best: { tenant: string; running: number; order: number } | undefined;
    for (const [tenant, list] of this.byTenant) {
      const running = this.running(tenant);
      const order = list[0]?.order ?? Number.POSITIVE_INFINITY;
      if (running >= this.perTenant) continue;
      if (!best || running < best.running || (running === best.running && order < best.order))
        best = { tenant, running, order };
    }
    if (!best) return undefined;
    const list = this.byTenant.get(best.tenant) ?? [];
    const first = list.shift();
    if (list.length === 0) this.byTenant.delete(best.tenant);
    if (!first) return undefined;
    this.count -= 1;
    this.runningBy.set(best.tenant, best.running + 1);
    return { tenant: best.tenant, entry: first.entry };
  }

  /** A job of `tenant` taken earlier stopped running. */
  done(tenant: string): void {
    const running = this.running(tenant) - 1;
    if (running > 0) this.runningBy.set(tenant, running);
    else this.runningBy.delete(tenant);
  }

  private running(tenant: string): number {
    return this.runningBy.get(tenant) ?? 0;
  }
}
