/** One load run (autocannon, or paced.ts at a fixed rate) and the figures the benchmark keeps from it. */
import autocannon from "autocannon";
import { runPacedLoad } from "./paced.ts";

export interface LoadSpec {
  url: string;
  connections: number;
  durationSeconds: number;
  headers: Record<string, string>;
  method: "GET" | "POST";
  /** The path and the body of each request (each called once per request). */
  path: () => string;
  body?: () => string;
  /**
   * Requests per second over all connections, evenly spaced (open loop, paced.ts); without it autocannon's
   * connections each send as fast as they are answered.
   */
  overallRate?: number;
}

export interface RunFigures {
  /** Responses per second over the run (all responses; any non-2xx fails the benchmark anyway). */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

/** Stops the run in progress (Ctrl-C): it then resolves early with what it measured. */
let stopCurrent = () => {};
export const stopCurrentLoad = () => stopCurrent();

export async function runLoad(spec: LoadSpec): Promise<RunFigures> {
  if (spec.overallRate) {
    const paced = new AbortController();
    stopCurrent = () => paced.abort();
    return runPacedLoad({ ...spec, overallRate: spec.overallRate }, paced.signal);
  }
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        duration: spec.durationSeconds,
        headers: spec.headers,
        method: spec.method,
        timeout: 10,
        requests: [{ setupRequest: (request) => ({ ...request, path: spec.path(), body: spec.body?.() }) }],
      },
      (error, result) => {
        if (error) return reject(error instanceof Error ? error : new Error(String(error)));
        resolve({
          rps: result.duration > 0 ? Number((result.requests.total / result.duration).toFixed(1)) : 0,
          p50: result.latency.p50,
          p99: result.latency.p99,
          requests: result.requests.total,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes: Object.fromEntries(
            Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0]),
          ),
        });
      },
    );
    stopCurrent = () => instance.stop();
  });
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
