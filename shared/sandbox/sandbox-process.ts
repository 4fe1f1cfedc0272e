import { AsyncResource } from "node:async_hooks";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Socket } from "node:net";
import type { SandboxError, SandboxErrorKind, SandboxResult, SvcOperation } from "#shared/ports/sandbox.ts";
import { carryOutFetch } from "./outbound-fetch.ts";
import { OutboundError, type OutboundPolicy, RunBudget, readCodeRequest } from "./outbound-request.ts";
import {
  type ChildMessage,
  type DoneMessage,
  type FetchFailure,
  type FetchMessage,
  type HostMessage,
  readChildMessage,
  readThrownInfo,
  type SvcFailure,
  type SvcMessage,
} from "./runner-protocol.ts";
import { childArguments, childSpawnOptions, DEFAULT_CHILD_SCRIPT, track } from "./spawn.ts";
import { readSvcCall, svcFailure } from "./svc-bridge.ts";

export interface ProcessLimits {
  /** V8 old-space limit of each process (`--max-old-space-size`). */
  memoryMb: number;
  /** Resident set size at which a busy process is killed as `memory` (Linux; catches ArrayBuffer bombs). */
  rssLimitMb: number;
  /** Longest result (or svc arguments) JSON a run may send back, in UTF-16 units. */
  maxResultChars: number;
  /** Longest wait for a new process to say it is ready. */
  startTimeoutMs: number;
  /**
   * CPU time a process may use while no run is in flight, summed over each idle spell (Linux): more means
   * something a run scheduled (a callback, thread-pool work) outlived it, and the process is killed as `cpu`.
   */
  idleCpuMs: number;
  /** Most CPU per wall-clock time, in cores, averaged over each second of the process's life (Linux). */
  maxCpuCores: number;
}

type ExitReason = "timeout" | "memory" | "cpu" | "crashed" | "stopped";

interface InflightRun {
  resolve: (result: SandboxResult) => void;
  timer: NodeJS.Timeout;
  timeoutMs: number;
  onSvcCall: ((op: SvcOperation, args: unknown[]) => Promise<unknown>) | undefined;
  svcCalls: number;
  outbound: RunOutbound | undefined;
}

/** A run's fetches: its budget, and what aborts them (the run's end, or the code's AbortSignal). */
interface RunOutbound {
  order: NonNullable<RunOrder["outbound"]>;
  budget: RunBudget;
  ended: AbortController;
  calls: Map<number, AbortController>;
}

export interface RunOrder {
  hash: string;
  code: string;
  input: string;
  parseArgsBody?: boolean;
  timeoutMs: number;
  onSvcCall: ((op: SvcOperation, args: unknown[]) => Promise<unknown>) | undefined;
  /** How the code's fetches are carried out; without it every fetch is refused. */
  outbound?: { tenantId: string; policy: OutboundPolicy; allowedHosts: readonly string[] | undefined };
}

const STDERR_KEEP = 4096;
/** How often the watchdog reads a process's CPU time and resident set: while runs are in flight, and idle. */
const BUSY_POLL_MS = 20;
const IDLE_POLL_MS = 100;
/** The window over which `maxCpuCores` is averaged. */
const CPU_WINDOW_MS = 1000;
/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat (100 on every Linux architecture Node runs on). */
const CLOCK_TICK_MS = 10;

const EXIT_MESSAGES: Record<ExitReason, string> = {
  memory: "the code exceeded the sandbox memory limit",
  cpu: "the sandbox process was stopped for using more CPU than its runs may",
  timeout: "the sandbox process was stopped because another run of the same code timed out",
  crashed: "the sandbox process stopped unexpectedly",
  stopped: "the sandbox was stopped",
};

const failure = (
  kind: SandboxErrorKind,
  message: string,
  extra: Partial<SandboxError> = {},
): SandboxResult => ({
  ok: false,
  error: { kind, message, ...extra },
});

/** One sandbox process: blank until the pool gives it a key, then only ever runs that key's code. */
export class SandboxProcess {
  /** (tenant, code hash) once assigned; a blank spare has none. */
  key: string | undefined;
  /** The tenant of `key`. */
  tenantId: string | undefined;
  lastUsed = Date.now();
  readonly ready: Promise<boolean>;
  private readonly child: ChildProcess;
  private readonly inflight = new Map<number, InflightRun>();
  private readonly loaded = new Set<string>();
  private nextId = 0;
  private pending = 0;
  private alive = true;
  /** Killed but not yet exited: takes no new run. */
  private dying = false;
  private exitReason: ExitReason | undefined;
  private stderr = "";
  private idleTimer: NodeJS.Timeout | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private watching = false;
  /** Whether the watchdog last saw the process idle (`touch` tracks the transitions). */
  private wasIdle = true;
  /** CPU time (ms) when the current idle spell began; undefined while busy or before the process is ready. */
  private idleCpuStart: number | undefined;
  /** Start of the current `maxCpuCores` window. */
  private cpuWindow: { at: number; cpuMs: number } | undefined;
  private readonly onExitCallbacks: Array<() => void> = [];

  constructor(
    private readonly limits: ProcessLimits,
    childScript: string = DEFAULT_CHILD_SCRIPT,
  ) {
    this.child = spawn(process.execPath, childArguments(childScript, limits.memoryMb), childSpawnOptions());
    track(this.child);
    // Only the IPC channel (while runs are in flight) may keep the host's event loop alive.
    if (this.child.stderr instanceof Socket) this.child.stderr.unref();
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_KEEP);
    });
    this.ready = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.kill("crashed");
        resolve(false);
      }, limits.startTimeoutMs);
      this.child.once("message", (raw) => {
        clearTimeout(timer);
        const ready = readChildMessage(raw)?.t === "ready" && this.alive;
        if (!ready) this.kill("crashed");
        resolve(ready);
      });
      this.onExit(() => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    this.child.on("message", (raw) => this.receive(raw));
    this.child.on("error", () => this.kill("crashed"));
    this.child.once("exit", () => this.exited());
    this.updateRef();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isAlive(): boolean {
    return this.alive && !this.dying;
  }

  /** No run in flight and none about to start. */
  get isIdle(): boolean {
    return this.inflight.size === 0 && this.pending === 0;
  }

  onExit(callback: () => void): void {
    if (this.alive) this.onExitCallbacks.push(callback);
    else callback();
  }

  /** Marks a run as about to start (keeps the process from being evicted or idling out meanwhile). */
  reserve(): () => void {
    this.pending += 1;
    this.touch();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.pending -= 1;
      this.touch();
    };
  }

  /** Sends one run; resolves when the child answers, the timeout passes or the process dies. */
  run(order: RunOrder): Promise<SandboxResult> {
    if (!this.isAlive) return Promise.resolve(failure("crashed", "the sandbox process stopped unexpectedly"));
    this.nextId += 1;
    const id = this.nextId;
    const firstRun = !this.loaded.has(order.hash);
    this.loaded.add(order.hash);
    // A blank process has run no one's code, so there is nothing to watch until its first run (a blank spare
    // can wait for hours: reading /proc ten times a second for it cost the host CPU for nothing).
    if (!this.watching) this.startWatchdog();
    return new Promise<SandboxResult>((resolve) => {
      const timer = setTimeout(() => this.kill("timeout", id), order.timeoutMs);
      this.inflight.set(id, {
        resolve,
        timer,
        timeoutMs: order.timeoutMs,
        // Code's svc calls arrive on the process's message handler: they run as part of this run's request.
        onSvcCall: order.onSvcCall && AsyncResource.bind(order.onSvcCall),
        svcCalls: 0,
        outbound:
          order.outbound === undefined
            ? undefined
            : {
                order: order.outbound,
                budget: new RunBudget(order.outbound.policy.limits, performance.now() + order.timeoutMs),
                ended: new AbortController(),
                calls: new Map(),
              },
      });
      this.touch();
      this.send({
        t: "run",
        id,
        hash: order.hash,
        code: firstRun ? order.code : undefined,
        input: order.input,
        ...(order.parseArgsBody ? { parseArgsBody: true } : {}),
        svc: order.onSvcCall !== undefined,
        timeoutMs: order.timeoutMs,
        maxResultChars: this.limits.maxResultChars,
      });
    });
  }

  /** Kills the process; its runs in flight fail (`timeout` for `timedOut`, the rest by `reason`). */
  kill(reason: ExitReason, timedOut?: number): void {
    if (!this.alive) return;
    this.dying = true;
    this.exitReason ??= reason;
    if (timedOut !== undefined) this.settle(timedOut, this.timeoutResult(timedOut));
    this.child.ref(); // whoever waits for the exit (close()) must see it
    this.child.kill("SIGKILL");
  }

  /** Kills the process when idle for `idleMs`; called whenever it becomes idle. */
  scheduleIdleExit(idleMs: number): void {
    clearTimeout(this.idleTimer);
    if (!this.isIdle || !this.isAlive) return;
    this.idleTimer = setTimeout(() => {
      if (this.isIdle) this.kill("stopped");
    }, idleMs);
    this.idleTimer.unref();
  }

  private timeoutResult(id: number): SandboxResult {
    const ms = this.inflight.get(id)?.timeoutMs ?? 0;
    return failure("timeout", `the code did not finish within ${ms} ms`);
  }

  private send(message: HostMessage): void {
    try {
      this.child.send(message, (error) => {
        if (error) this.kill("crashed");
      });
    } catch {
      this.kill("crashed");
    }
  }

  private receive(raw: unknown): void {
    const message: ChildMessage | undefined = readChildMessage(raw);
    if (message === undefined) {
      this.kill("crashed");
      return;
    }
    if (message.t === "done") this.finished(message);
    else if (message.t === "svc") this.svcCall(message);
    else if (message.t === "fetch") this.fetchCall(message);
    else if (message.t === "fetch-cancel")
      this.inflight.get(message.id)?.outbound?.calls.get(message.call)?.abort();
  }

  private finished(message: DoneMessage): void {
    const { id, kind, payload } = message;
    if (!this.inflight.has(id)) return;
    switch (kind) {
      case "ok":
        this.settle(id, this.okResult(payload));
        return;
      case "thrown":
        this.settle(id, { ok: false, error: { kind: "thrown", ...readThrownInfo(payload) } });
        return;
      case "invalid-code": {
        const info = readThrownInfo(payload);
        this.settle(id, failure("invalid-code", `the code cannot run: ${info.name}: ${info.message}`));
        return;
      }
      case "too-large":
        this.settle(id, this.tooLarge());
        return;
      case "timeout":
        // The child stopped the code at its deadline; the process is replaced all the same.
        this.kill("timeout", id);
        return;
    }
  }

  private okResult(payload: string | undefined): SandboxResult {
    if (payload === undefined) return { ok: true, value: undefined };
    if (payload.length > this.limits.maxResultChars) return this.tooLarge();
    try {
      return { ok: true, value: JSON.parse(payload) };
    } catch {
      return failure("crashed", "the sandbox process answered nonsense");
    }
  }

  private tooLarge(): SandboxResult {
    return failure("memory", `the result exceeds ${this.limits.maxResultChars} characters of JSON`);
  }

  private svcCall(message: SvcMessage): void {
    const run = this.inflight.get(message.id);
    if (run?.onSvcCall === undefined) return; // the run has ended, or has no svc
    const onSvcCall = run.onSvcCall;
    const reply = (ok: boolean, payload: string | undefined) => {
      if (this.inflight.get(message.id) === run && this.isAlive)
        this.send({ t: "svc-result", id: message.id, call: message.call, ok, payload });
    };
    const refuse = (info: SvcFailure) => reply(false, JSON.stringify(info));
    run.svcCalls += 1;
    const call = readSvcCall(message, run.svcCalls);
    if (typeof call === "string") {
      refuse({ message: call });
      return;
    }
    Promise.resolve()
      .then(() => onSvcCall(call.op, call.args))
      .then(
        (value) => reply(true, value === undefined ? undefined : JSON.stringify(value)),
        (error: unknown) => refuse(svcFailure(error)),
      )
      .catch(() => refuse({ message: "the svc call failed" }));
  }

  /** Carries out the code's fetch in this (host) process; the answer goes back only while the run is in flight. */
  private fetchCall(message: FetchMessage): void {
    const run = this.inflight.get(message.id);
    if (run === undefined) return; // the run has ended
    const reply = (ok: boolean, payload: string) => {
      run.outbound?.calls.delete(message.call);
      if (this.inflight.get(message.id) === run && this.isAlive)
        this.send({ t: "fetch-result", id: message.id, call: message.call, ok, payload });
    };
    const refuse = (error: unknown) => {
      const info: FetchFailure =
        error instanceof OutboundError
          ? { message: error.message, type: error.type }
          : { message: "the request failed", type: "system" };
      reply(false, JSON.stringify(info));
    };
    const outbound = run.outbound;
    if (outbound === undefined) {
      refuse(new OutboundError("fetch is not available to this code", "refused"));
      return;
    }
    const aborted = new AbortController();
    outbound.calls.set(message.call, aborted);
    Promise.resolve()
      .then(() =>
        carryOutFetch(readCodeRequest(message.request), {
          tenantId: outbound.order.tenantId,
          policy: outbound.order.policy,
          allowedHosts: outbound.order.allowedHosts,
          budget: outbound.budget,
          signal: AbortSignal.any([aborted.signal, outbound.ended.signal]),
        }),
      )
      .then((answer) => reply(true, JSON.stringify(answer)), refuse)
      .catch(() => refuse(undefined));
  }

  private settle(id: number, result: SandboxResult): void {
    const run = this.inflight.get(id);
    if (run === undefined) return;
    run.outbound?.ended.abort(); // nothing the run started outlives it
    clearTimeout(run.timer);
    this.inflight.delete(id);
    run.resolve(result);
    this.touch();
  }

  private exited(): void {
    this.alive = false;
    clearTimeout(this.idleTimer);
    clearTimeout(this.watchTimer);
    const oom = /out of memory|heap limit/i.test(this.stderr);
    const reason: ExitReason = oom ? "memory" : (this.exitReason ?? "crashed");
    const result = failure(reason === "memory" ? "memory" : "crashed", EXIT_MESSAGES[reason]);
    for (const id of [...this.inflight.keys()]) this.settle(id, result);
    for (const callback of this.onExitCallbacks.splice(0)) callback();
  }

  /** Runs keep the host's event loop alive; an idle process (or blank spare) does not. */
  private touch(): void {
    this.lastUsed = Date.now();
    this.updateRef();
    this.trackIdle();
  }

  private updateRef(): void {
    const busy = !this.isIdle || this.dying; // a dying process is awaited until it exits
    const channel = this.child.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (busy) {
      this.child.ref();
      channel?.ref?.();
    } else {
      this.child.unref();
      channel?.unref?.();
    }
  }

  /**
   * The watchdog, from the process's first run until it exits (Linux): it reads the process's CPU
   * time and resident set from /proc, which the code cannot fake, and kills the process
   * - as `memory` when the resident set passes `rssLimitMb` (V8's heap limit misses ArrayBuffers), busy or idle;
   * - as `cpu` when, with no run in flight, it used more than `idleCpuMs` since it last became idle: work a
   *   run scheduled outlived it (a module callback, thread-pool work), and the process is replaced;
   * - as `cpu` when it averaged more than `maxCpuCores` over a second, busy or idle (thread-pool work piling
   *   up behind a tenant's back-to-back runs).
   */
  private startWatchdog(): void {
    if (process.platform !== "linux" || !this.alive) return;
    this.watching = true;
    this.trackIdle();
    this.schedulePoll();
  }

  private schedulePoll(): void {
    clearTimeout(this.watchTimer);
    if (!this.alive || this.dying) return;
    this.watchTimer = setTimeout(
      () => {
        this.sample();
        this.schedulePoll();
      },
      this.isIdle ? IDLE_POLL_MS : BUSY_POLL_MS,
    ).unref();
  }

  /** Notes the start of an idle spell (its CPU baseline) or of a busy one; Linux only. */
  private trackIdle(): void {
    if (!this.watching || !this.alive) return;
    const idle = this.isIdle;
    if (idle === this.wasIdle && (!idle || this.idleCpuStart !== undefined)) return;
    this.wasIdle = idle;
    if (!idle) {
      this.idleCpuStart = undefined;
      this.schedulePoll(); // sooner samples while busy (a memory bomb grows fast)
      return;
    }
    this.idleCpuStart = this.cpuMs();
  }

  private sample(): void {
    if (!this.alive || this.dying) return;
    const cpuMs = this.cpuMs();
    const rssKb = this.rssKb();
    if (cpuMs === undefined || rssKb === undefined) return;
    if (rssKb > this.limits.rssLimitMb * 1024) {
      this.kill("memory");
      return;
    }
    this.trackIdle();
    if (this.isIdle && this.idleCpuStart !== undefined && cpuMs - this.idleCpuStart > this.limits.idleCpuMs) {
      this.kill("cpu");
      return;
    }
    // Whether busy or idle (short idle spells between back-to-back runs must not reset it).
    const now = performance.now();
    const window = this.cpuWindow;
    if (window !== undefined && now - window.at < CPU_WINDOW_MS) return;
    if (window !== undefined && (cpuMs - window.cpuMs) / (now - window.at) > this.limits.maxCpuCores) {
      this.kill("cpu");
      return;
    }
    this.cpuWindow = { at: now, cpuMs };
  }

  /** CPU time (user + system, all threads) of the process in ms, from /proc; undefined if it is gone. */
  private cpuMs(): number | undefined {
    const stat = this.readProc("stat");
    if (stat === undefined) return undefined;
    // The fields after the command name (which may hold spaces and parentheses): utime is the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * CLOCK_TICK_MS : undefined;
  }

  /** Resident set of the process in KiB, from /proc; undefined if it is gone. */
  private rssKb(): number | undefined {
    const status = this.readProc("status");
    return status === undefined ? undefined : Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }

  private readProc(file: "stat" | "status"): string | undefined {
    if (this.child.pid === undefined) return undefined;
    try {
      return readFileSync(`/proc/${this.child.pid}/${file}`, "utf8");
    } catch {
      return undefined;
    }
  }
}
