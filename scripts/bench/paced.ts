/**
 * An open-loop load at a fixed rate: one request every 1000 ÷ rate ms, evenly spaced, on at most `connections`
 * keep-alive connections.
 *
 * Why not autocannon's `overallRate`: autocannon sends as fast as it is answered until a connection's quota for
 * the second is used up, then pauses until the next second. At "250 req/s" on 16 connections that is a burst
 * at saturation at the start of every second, so its p50 measured queueing in the burst (about 8 × the CPU of a
 * request), not the latency of a request under a load the service sustains.
 *
 * Each latency counts from the moment the request was due, not from when a connection was free to send it, so a
 * target that falls behind shows it (no coordinated omission).
 */
import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { LoadSpec, RunFigures } from "./load.ts";

/** Requests still unanswered this long after the run are counted as timeouts. */
const TIMEOUT_MS = 10_000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}

/** `stop` (Ctrl-C) ends the run early: nothing more is sent, and what was sent is awaited and counted. */
export async function runPacedLoad(
  spec: LoadSpec & { overallRate: number },
  stop?: AbortSignal,
): Promise<RunFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const intervalMs = 1000 / spec.overallRate;
  const total = Math.round(spec.durationSeconds * spec.overallRate);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const body = spec.body?.();
      const req = request(
        new URL(spec.path(), spec.url),
        {
          method: spec.method,
          agent,
          timeout: TIMEOUT_MS,
          headers: { ...spec.headers, ...(body ? { "content-length": Buffer.byteLength(body) } : {}) },
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            latencies.push(performance.now() - due);
            const code = String(res.statusCode ?? 0);
            statusCodes[code] = (statusCodes[code] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on("timeout", () => {
        timeouts += 1;
        req.destroy();
      });
      req.on("error", () => {
        errors += 1;
        resolve();
      });
      req.end(body);
    });

  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total && !stop?.aborted; i++) {
    const due = started + i * intervalMs;
    // Node's timers run on a millisecond clock read at the start of the loop's turn, so one can fire up to a
    // millisecond before `due` by performance.now(): wait again for what is left, never send early.
    for (let wait = due - performance.now(); wait > 0; wait = due - performance.now()) await sleep(wait);
    inFlight.push(send(due));
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const non2xx = Object.entries(statusCodes)
    .filter(([code]) => !code.startsWith("2"))
    .reduce((sum, [, count]) => sum + count, 0);
  const round = (ms: number) => Number(ms.toFixed(2));
  return {
    rps: Number((latencies.length / seconds).toFixed(1)),
    p50: round(percentile(sorted, 0.5)),
    p99: round(percentile(sorted, 0.99)),
    requests: latencies.length,
    non2xx,
    errors: errors - timeouts,
    timeouts,
    statusCodes,
  };
}
