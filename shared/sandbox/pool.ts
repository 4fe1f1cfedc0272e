import { createHash } from "node:crypto";
import { outsideAnyRequest } from "#shared/domain/idempotency-scope.ts";
import type { Sandbox, SandboxRequest, SandboxResult, SvcOperation } from "#shared/ports/sandbox.ts";
import { DEFAULT_OUTBOUND_LIMITS, type OutboundLimits, type OutboundPolicy } from "./outbound-request.ts";
import { SandboxProcess } from "./sandbox-process.ts";
import { DEFAULT_CHILD_SCRIPT } from "./spawn.ts";

export interface ProcessSandboxOptions {
  /** Most processes alive at once, the blank spare included (default 16). */
  maxProcesses?: number;
  /**
   * Most processes one tenant may keep busy at once, whatever its fair share (default: no cap beyond the
   * share). The share is `max(1, floor(maxProcesses / (busy tenants + 1)))`, where busy tenants are those
   * with a run in flight, the asking tenant included; see `ProcessSandbox`.
   */
  maxProcessesPerTenant?: number;
  /** CPU time a process may use with no run in flight, per idle spell, before it is killed (default 100 ms). */
  idleCpuMs?: number;
  /** Most CPU a process may average over each second of its life, in cores (default 2). */
  maxCpuCores?: number;
  /** An idle process exits after this long (default 60 s). */
  idleMs?: number;
  /** V8 heap limit per process (default 64 MB). */
  memoryMb?: number;
  /** Resident set size that kills a busy process as `memory` (default 2 × memoryMb + 128 MB). */
  rssLimitMb?: number;
  /** Longest result JSON, in UTF-16 units (default 6 Mi: Lambda's response limit). */
  maxResultChars?: number;
  /** Longest wait for a new process to start (default 5 s). */
  startTimeoutMs?: number;
  /** Keep one blank process started, so new code does not wait for Node to boot (default true). */
  prespawn?: boolean;
  /** Where child.mjs is (next to the bundle in a Lambda package). */
  childScript?: string;
  /**
   * How the code's `fetch` calls are carried out by this (host) process: default private addresses refused,
   * http allowed, DEFAULT_OUTBOUND_LIMITS.
   */
  outbound?: Partial<OutboundPolicy>;
}

const MAX_TIMEOUT_MS = 5 * 60_000;

/**
 * The local sandbox: a pool of child processes, at most one per (tenant, SHA-256 of the code). Warm runs reuse
 * it (concurrent runs of one key share it, multiplexed by run id); a process is never given to another key.
 * New keys take the blank spare, which has run nobody's code, and a new spare starts behind it.
 *
 * Fair share: a busy process (a run in flight or about to start) cannot be evicted, so a tenant could hold
 * the whole pool with long runs of many code versions. A tenant may therefore make a process busy only while
 * it has fewer busy processes than `max(1, floor(maxProcesses / (n + 1)))`, n being the number of tenants
 * with a busy process, itself included (and at most `maxProcessesPerTenant`): the "+ 1" keeps room for a
 * tenant that is not running yet. Runs of a key whose process is already busy join it and need no share.
 * A run over its tenant's share waits, like any run in a full pool, until one of that tenant's processes
 * goes idle, and fails as `timeout` at its deadline.
 */
export class ProcessSandbox implements Sandbox {
  private readonly byKey = new Map<string, SandboxProcess>();
  private readonly all = new Set<SandboxProcess>();
  private spare: SandboxProcess | undefined;
  private waiters: Array<() => void> = [];
  private closed = false;
  private readonly maxProcesses: number;
  private readonly maxPerTenant: number;
  private readonly idleMs: number;
  private readonly prespawn: boolean;
  private readonly childScript: string;
  private readonly limits: ConstructorParameters<typeof SandboxProcess>[0];
  private readonly outbound: OutboundPolicy;

  constructor(options: ProcessSandboxOptions = {}) {
    this.maxProcesses = Math.max(1, options.maxProcesses ?? 16);
    this.maxPerTenant = Math.max(1, options.maxProcessesPerTenant ?? this.maxProcesses);
    this.idleMs = options.idleMs ?? 60_000;
    this.prespawn = options.prespawn ?? true;
    this.childScript = options.childScript ?? DEFAULT_CHILD_SCRIPT;
    this.outbound = {
      allowPrivate: options.outbound?.allowPrivate ?? false,
      requireHttps: options.outbound?.requireHttps ?? false,
      limits: options.outbound?.limits ?? DEFAULT_OUTBOUND_LIMITS,
    };
    const memoryMb = options.memoryMb ?? 64;
    this.limits = {
      memoryMb,
      rssLimitMb: options.rssLimitMb ?? memoryMb * 2 + 128,
      maxResultChars: options.maxResultChars ?? 6 * 1024 * 1024,
      startTimeoutMs: options.startTimeoutMs ?? 5000,
      idleCpuMs: options.idleCpuMs ?? 100,
      maxCpuCores: options.maxCpuCores ?? 2,
    };
  }

  /** Starts the blank spare now (e.g. at server start) and waits until it is ready. */
  async warm(): Promise<void> {
    this.refillSpare();
    const spare = this.spare;
    if (spare === undefined) return;
    const release = spare.reserve(); // holds the host's event loop open while it starts
    try {
      await spare.ready;
    } finally {
      release();
    }
  }

  /** `outboundLimits`: this run's fetch limits instead of the pool's (the runner Lambda gets them per run). */
  async run(request: SandboxRequest & { outboundLimits?: OutboundLimits }): Promise<SandboxResult> {
    const { tenantId, code, timeoutMs, onSvcCall } = request;
    if (this.closed) throw new Error("the sandbox is closed");
    if (typeof tenantId !== "string" || tenantId === "")
      throw new TypeError("tenantId must be a non-empty string");
    if (typeof code !== "string") throw new TypeError("code must be a string");
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
      throw new TypeError(`timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`);
    const input = JSON.stringify(request.input ?? null);
    const hash = createHash("sha256").update(code).digest("hex");
    const key = JSON.stringify([tenantId, hash]);

    const acquired = await this.acquire(tenantId, key, Date.now() + timeoutMs);
    if (acquired === undefined) return failure("timeout", "no sandbox process became free in time");
    const { proc, release } = acquired;
    try {
      if (!(await proc.ready)) return failure("crashed", "the sandbox process could not start");
      const policy = request.outboundLimits
        ? { ...this.outbound, limits: request.outboundLimits }
        : this.outbound;
      const outbound = { tenantId, policy, allowedHosts: request.allowedHosts };
      // Which tokens the svc calls handed data from, whether answered here or through the API (a runner Lambda).
      const dataFrom = new Set<string>();
      const noted = onSvcCall
        ? async (op: SvcOperation, args: unknown[]) => {
            const answer = (await onSvcCall(op, args)) as { id?: unknown; data?: unknown } | null;
            if (answer?.data !== undefined && answer.data !== null && typeof answer.id === "string")
              dataFrom.add(answer.id);
            return answer;
          }
        : undefined;
      const result = await proc.run({
        hash,
        code,
        input,
        ...(request.parseArgsBody ? { parseArgsBody: true } : {}),
        timeoutMs,
        onSvcCall: noted,
        outbound,
      });
      return dataFrom.size > 0 ? { ...result, dataFrom: [...dataFrom] } : result;
    } finally {
      release();
      if (proc.isIdle) proc.scheduleIdleExit(this.idleMs);
      this.wake();
    }
  }

  /** The pid serving this tenant's code, if one is alive (tests and diagnostics). */
  pidOf(tenantId: string, code: string): number | undefined {
    const hash = createHash("sha256").update(code).digest("hex");
    const proc = this.byKey.get(JSON.stringify([tenantId, hash]));
    return proc?.isAlive ? proc.pid : undefined;
  }

  /** How many processes are alive, the spare included. */
  get size(): number {
    return this.all.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const exits = [...this.all].map((proc) => new Promise<void>((resolve) => proc.onExit(resolve)));
    for (const proc of this.all) proc.kill("stopped");
    this.wake();
    await Promise.all(exits);
  }

  /**
   * The key's process, or a new one for it, reserved (so it is neither evicted nor idled out before the run
   * starts); undefined when every slot stayed busy until the deadline.
   */
  private async acquire(
    tenantId: string,
    key: string,
    deadline: number,
  ): Promise<{ proc: SandboxProcess; release: () => void } | undefined> {
    for (;;) {
      if (this.closed) throw new Error("the sandbox is closed");
      const current = this.byKey.get(key)?.isAlive ? this.byKey.get(key) : undefined;
      const proc =
        current !== undefined && !current.isIdle
          ? current
          : this.withinShare(tenantId)
            ? (current ?? this.assign(key, tenantId))
            : undefined;
      if (proc !== undefined) {
        const release = proc.reserve();
        // After the reservation, so making room for the next spare can never retire this process.
        this.refillSpare();
        return { proc, release };
      }
      if (!(await this.waitForCapacity(deadline))) return undefined;
    }
  }

  /** Whether the tenant may make one more process busy (see the class comment). */
  private withinShare(tenantId: string): boolean {
    const busy = new Map<string, number>([[tenantId, 0]]);
    for (const proc of this.all) {
      if (proc.tenantId !== undefined && !proc.isIdle)
        busy.set(proc.tenantId, (busy.get(proc.tenantId) ?? 0) + 1);
    }
    return (busy.get(tenantId) ?? 0) < fairShare(this.maxProcesses, busy.size, this.maxPerTenant);
  }

  private assign(key: string, tenantId: string): SandboxProcess | undefined {
    let proc = this.spare?.isAlive ? this.spare : undefined;
    this.spare = undefined;
    if (proc === undefined) {
      if (!this.makeRoom()) return undefined;
      proc = this.spawn();
    }
    proc.key = key;
    proc.tenantId = tenantId;
    this.byKey.set(key, proc);
    return proc;
  }

  /** Frees a slot by stopping the least recently used idle process, if the pool is full. */
  private makeRoom(): boolean {
    if (this.all.size < this.maxProcesses) return true;
    let victim: SandboxProcess | undefined;
    for (const proc of this.all) {
      if (proc.key !== undefined && proc.isIdle && (victim === undefined || proc.lastUsed < victim.lastUsed))
        victim = proc;
    }
    if (victim === undefined) return false;
    this.forget(victim);
    victim.kill("stopped");
    return true;
  }

  /**
   * Keeps one blank process ready. At the cap, the least recently used idle process makes way for it: a new
   * tenant or code version then starts in milliseconds, and only that long-idle key pays a cold start later.
   */
  private refillSpare(): void {
    if (!this.prespawn || this.closed || this.spare !== undefined) return;
    if (!this.makeRoom()) return;
    this.spare = this.spawn();
  }

  private spawn(): SandboxProcess {
    // A process outlives the request that spawns it: its handlers must not run in that request's context.
    const proc = outsideAnyRequest(() => new SandboxProcess(this.limits, this.childScript));
    this.all.add(proc);
    proc.onExit(() => {
      this.forget(proc);
      this.wake();
    });
    return proc;
  }

  private forget(proc: SandboxProcess): void {
    this.all.delete(proc);
    if (this.spare === proc) this.spare = undefined;
    if (proc.key !== undefined && this.byKey.get(proc.key) === proc) this.byKey.delete(proc.key);
  }

  private waitForCapacity(deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(Date.now() < deadline);
      });
    });
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/**
 * How many processes one tenant may keep busy: `max(1, floor(maxProcesses / (busyTenants + 1)))`, at most
 * `maxPerTenant`. `busyTenants` counts the tenants with a run in flight, the asking one included.
 */
export function fairShare(maxProcesses: number, busyTenants: number, maxPerTenant = maxProcesses): number {
  return Math.min(maxPerTenant, Math.max(1, Math.floor(maxProcesses / (busyTenants + 1))));
}

function failure(kind: "timeout" | "crashed", message: string): SandboxResult {
  return { ok: false, error: { kind, message } };
}
