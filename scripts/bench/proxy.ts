/**
 * The proxy scenario's set-up and its unloaded measurements (docs/performance.md, "Proxy").
 *
 * Under load (bench.ts) three targets get the same autocannon settings: `direct` (POST straight to the loopback
 * destination), `proxy` (POST /proxy, one card token detokenized) and `proxy+transform` (the same through a
 * proxy whose request transform is trivial). Without load, one request at a time, this module measures:
 *
 * - the same three targets in turn (latency without queueing),
 * - the warm transform alone: the same code and a proxy-like input through a ProcessSandbox in this process,
 * - the first request through proxies with transform code the service has never run (and the second one),
 *   1 s apart (the blank spare is ready again) and back to back (it may still be booting).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ProcessSandbox } from "#shared/sandbox/pool.ts";
import { call, timedCall } from "./api.ts";
import { SLOW_PATH_PREFIX } from "./destination.ts";
import { median } from "./load.ts";

/** The request transform of `proxy+transform`: hands the body and headers on unchanged. */
export const TRIVIAL_TRANSFORM =
  "module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });";

/** The destination's path; proxies point at `<destination>/charges`, with no suffix. */
export const DESTINATION_PATH = "/charges";
/** The same, answered SLOW_ANSWER_MS late (scripts/bench/destination.ts). */
export const SLOW_DESTINATION_PATH = `${SLOW_PATH_PREFIX}${DESTINATION_PATH}`;

export interface ProxySetup {
  destinationUrl: string;
  /** The proxy floor (scripts/bench/floor-service.ts). */
  floorUrl: string;
  /** The SVC-API-KEY of callers: a private application with token:use. */
  useKey: string;
  cardTokenId: string;
  /** The same card in the floor (scripts/bench/floor-service.ts), for its POST /proxy/{id}. */
  floorCardTokenId: string;
  proxyKey: string;
  transformProxyKey: string;
  /** A proxy without a transform to SLOW_DESTINATION_PATH. */
  slowProxyKey: string;
  /** What `direct` sends, and what the destination receives from both proxies. */
  directBody: string;
  /** What the proxies get: one detokenization expression. */
  proxyBody: string;
}

async function createProxy(
  serviceUrl: string,
  managementKey: string,
  destinationUrl: string,
  name: string,
  transformCode?: string,
  path = DESTINATION_PATH,
): Promise<string> {
  const proxy = await call<{ key: string }>(
    serviceUrl,
    "POST",
    "/proxies",
    managementKey,
    {
      name,
      destination_url: `${destinationUrl}${path}`,
      ...(transformCode ? { request_transform: { code: transformCode } } : {}),
    },
    201,
  );
  return proxy.key;
}

/** Headers of a request through a proxy. */
export const proxyHeaders = (proxyKey: string, useKey: string) => ({
  "svc-proxy-key": proxyKey,
  "svc-api-key": useKey,
  "content-type": "application/json",
});

export async function setUpProxies(options: {
  serviceUrl: string;
  floorUrl: string;
  managementKey: string;
  createKey: string;
  useKey: string;
  destinationUrl: string;
  card: Record<string, unknown>;
}): Promise<ProxySetup> {
  const { serviceUrl, managementKey, destinationUrl, useKey } = options;
  const token = await call<{ id: string }>(
    serviceUrl,
    "POST",
    "/tokens",
    options.createKey,
    { type: "card", data: options.card },
    201,
  );
  const floorToken = await call<{ id: string }>(
    options.floorUrl,
    "POST",
    "/tokens",
    undefined,
    { type: "card", data: options.card },
    201,
  );
  const setup: ProxySetup = {
    destinationUrl,
    floorUrl: options.floorUrl,
    useKey,
    cardTokenId: token.id,
    floorCardTokenId: floorToken.id,
    proxyKey: await createProxy(serviceUrl, managementKey, destinationUrl, "bench proxy"),
    transformProxyKey: await createProxy(
      serviceUrl,
      managementKey,
      destinationUrl,
      "bench proxy+transform",
      TRIVIAL_TRANSFORM,
    ),
    slowProxyKey: await createProxy(
      serviceUrl,
      managementKey,
      destinationUrl,
      "bench proxy, slow destination",
      undefined,
      SLOW_DESTINATION_PATH,
    ),
    directBody: JSON.stringify({ card: options.card }),
    proxyBody: JSON.stringify({ card: `{{ ${token.id} }}` }),
  };
  // One request through each, so that a broken path fails here rather than after the other scenarios.
  for (const path of [DESTINATION_PATH, SLOW_DESTINATION_PATH])
    await call(destinationUrl, "POST", path, undefined, setup.directBody, 200);
  for (const key of [setup.proxyKey, setup.transformProxyKey, setup.slowProxyKey])
    await call(serviceUrl, "POST", "/proxy", undefined, setup.proxyBody, 200, proxyHeaders(key, useKey));
  for (const path of ["/pass", "/slow/pass"])
    await call(options.floorUrl, "POST", path, undefined, setup.directBody, 200);
  for (const path of [`/proxy/${floorToken.id}`, `/slow/proxy/${floorToken.id}`])
    await call(options.floorUrl, "POST", path, undefined, setup.proxyBody, 200);
  return setup;
}

export interface LatencyStats {
  n: number;
  p50: number;
  p90: number;
  max: number;
}

export function latencyStats(values: number[]): LatencyStats {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (v: number) => Number(v.toFixed(2));
  return {
    n: values.length,
    p50: round(median(values)),
    p90: round(sorted[Math.max(0, Math.ceil(0.9 * sorted.length) - 1)] ?? Number.NaN),
    max: round(sorted.at(-1) ?? Number.NaN),
  };
}

/**
 * Targets timed one request at a time, in turn (so a noisy moment weighs on all of them alike), after 20
 * warm-up rounds: each target's stats, in order. `check` throws to stop (Ctrl-C); called between rounds.
 */
export async function interleavedLatencies<const Targets extends readonly (() => Promise<number>)[]>(
  targets: Targets,
  samples: number,
  check: () => void,
): Promise<{ [K in keyof Targets]: LatencyStats }> {
  for (let i = 0; i < 20; i++) for (const target of targets) await target();
  const times = targets.map((): number[] => []);
  for (let i = 0; i < samples; i++) {
    check();
    for (const [t, target] of targets.entries()) times[t]?.push(await target());
  }
  return times.map(latencyStats) as { [K in keyof Targets]: LatencyStats };
}

export const describeStats = (s: LatencyStats) =>
  `p50 ${s.p50.toFixed(2)} ms, p90 ${s.p90.toFixed(2)} ms, max ${s.max.toFixed(2)} ms (n=${s.n})`;

export interface NewCodeSeries {
  /** Pause after each new proxy's two requests (ms). */
  pause_ms: number;
  with_transform: boolean;
  first: LatencyStats;
  second: LatencyStats;
  first_ms: number[];
  /** The service's sandbox processes (spare included) just before each first request; the pool's cap is 16. */
  sandbox_processes_before: number[];
}

export interface ProxyLatency {
  /** One request at a time, `samples` of each target in turn: latency without queueing. */
  sequential: { direct: LatencyStats; proxy: LatencyStats; transform: LatencyStats };
  /**
   * The slow destination's path one request at a time, nothing else running: what each adds to a request
   * without any queueing (the 90 % target at 16 connections allows about 2.3 ms).
   */
  sequential_slow: {
    direct: LatencyStats;
    pass_through: LatencyStats;
    floor: LatencyStats;
    proxy: LatencyStats;
  };
  /** p50(proxy+transform) − p50(proxy), one request at a time. */
  sequential_transform_adds_p50_ms: number;
  /** The same transform code and a proxy-like input run warm through a ProcessSandbox in the bench process. */
  sandbox_warm: LatencyStats;
  /** New proxies without a transform: what a first request costs besides the sandbox (the control). */
  new_proxy_without_transform: NewCodeSeries;
  /** New proxies, each with transform code never run before, 1 s apart: the blank spare is ready. */
  new_code: NewCodeSeries;
  /** The same, back to back: the spare may still be booting, or the pool at its process cap (16). */
  new_code_back_to_back: NewCodeSeries;
  /** proxy and proxy+transform at one fixed request rate both sustain easily (set by bench.ts). */
  fixed_rate?: FixedRateLatency;
}

/**
 * Latency under load without saturation: at saturation (the load runs) p50 ≈ connections ÷ req/s, so the
 * difference of two targets' p50 measures their throughputs, not what one adds to a request.
 */
export interface FixedRateLatency {
  /** Half of proxy+transform's saturated req/s, rounded down to a multiple of 10. */
  rate_rps: number;
  proxy_p50_ms: number[];
  transform_p50_ms: number[];
  /** median(transform p50s) − median(proxy p50s). */
  transform_adds_p50_ms: number;
}

/** `count` new proxies (new transform code each, or none), then per proxy: its first and second request. */
async function newCodeSeries(
  setup: ProxySetup,
  serviceUrl: string,
  managementKey: string,
  count: number,
  pauseMs: number,
  withTransform: boolean,
  check: () => void,
  sandboxProcesses: () => number,
): Promise<NewCodeSeries> {
  const series = randomUUID();
  const keys: string[] = [];
  for (let i = 0; i < count; i++)
    keys.push(
      await createProxy(
        serviceUrl,
        managementKey,
        setup.destinationUrl,
        `bench new ${i}`,
        withTransform ? `// bench: new code ${series} ${i}\n${TRIVIAL_TRANSFORM}` : undefined,
      ),
    );
  await sleep(1000); // the spare that proxy creation did not touch is ready; nothing else is in flight
  const first: number[] = [];
  const second: number[] = [];
  const processes: number[] = [];
  for (const key of keys) {
    check();
    processes.push(sandboxProcesses());
    const request = () =>
      timedCall(
        serviceUrl,
        "POST",
        "/proxy",
        undefined,
        setup.proxyBody,
        200,
        proxyHeaders(key, setup.useKey),
      );
    first.push(await request());
    second.push(await request());
    if (pauseMs > 0) await sleep(pauseMs);
  }
  return {
    pause_ms: pauseMs,
    with_transform: withTransform,
    first: latencyStats(first),
    second: latencyStats(second),
    first_ms: first.map((v) => Number(v.toFixed(2))),
    sandbox_processes_before: processes,
  };
}

/** Warm runs of the transform alone, in a ProcessSandbox of this process (nothing else is running). */
async function sandboxWarm(setup: ProxySetup, samples: number): Promise<LatencyStats> {
  const sandbox = new ProcessSandbox();
  try {
    await sandbox.warm();
    const input = {
      args: {
        body: JSON.parse(setup.directBody) as unknown,
        headers: {
          host: new URL(setup.destinationUrl).host,
          connection: "keep-alive",
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(setup.directBody)),
        },
        method: "POST",
        path: "",
        query: "",
      },
      configuration: {},
    };
    const run = async () => {
      const started = performance.now();
      const result = await sandbox.run({
        tenantId: "bench-tenant",
        code: TRIVIAL_TRANSFORM,
        input,
        timeoutMs: 5000,
      });
      if (!result.ok) throw new Error(`sandbox run failed: ${result.error.kind} ${result.error.message}`);
      return performance.now() - started;
    };
    for (let i = 0; i < 20; i++) await run();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) times.push(await run());
    return latencyStats(times);
  } finally {
    await sandbox.close();
  }
}

export async function measureProxyLatency(
  setup: ProxySetup,
  serviceUrl: string,
  managementKey: string,
  options: {
    samples: number;
    newProxies: number;
    log: (line: string) => void;
    /** Throws to stop (Ctrl-C); called between requests. */
    check: () => void;
    /** How many sandbox processes the service has (spare included). */
    sandboxProcesses: () => number;
  },
): Promise<ProxyLatency> {
  const { samples, newProxies, log, check, sandboxProcesses } = options;
  const direct = () =>
    timedCall(setup.destinationUrl, "POST", DESTINATION_PATH, undefined, setup.directBody, 200);
  const through = (key: string) => () =>
    timedCall(serviceUrl, "POST", "/proxy", undefined, setup.proxyBody, 200, proxyHeaders(key, setup.useKey));
  log(`proxy: ${samples} requests per target, one at a time, in turn…`);
  const [directStats, proxyStats, transformStats] = await interleavedLatencies(
    [direct, through(setup.proxyKey), through(setup.transformProxyKey)],
    samples,
    check,
  );

  check();
  log(`proxy: ${samples} requests per slow-destination target, one at a time, in turn…`);
  const json = { "content-type": "application/json" };
  const floorPath = `/slow/proxy/${encodeURIComponent(setup.floorCardTokenId)}`;
  const [slowDirect, slowPass, slowFloor, slowProxy] = await interleavedLatencies(
    [
      () => timedCall(setup.destinationUrl, "POST", SLOW_DESTINATION_PATH, undefined, setup.directBody, 200),
      () => timedCall(setup.floorUrl, "POST", "/slow/pass", undefined, setup.directBody, 200, json),
      () => timedCall(setup.floorUrl, "POST", floorPath, undefined, setup.proxyBody, 200, json),
      through(setup.slowProxyKey),
    ],
    samples,
    check,
  );

  check();
  log(`proxy: ${samples} warm runs of the transform alone through a ProcessSandbox…`);
  const sandbox_warm = await sandboxWarm(setup, samples);

  log(`proxy: first and second request through ${newProxies} new proxies without a transform, back to back…`);
  const control = await newCodeSeries(
    setup,
    serviceUrl,
    managementKey,
    newProxies,
    0,
    false,
    check,
    sandboxProcesses,
  );
  log(
    `proxy: first and second request through ${newProxies} new proxies with new transform code, 1 s apart…`,
  );
  const spaced = await newCodeSeries(
    setup,
    serviceUrl,
    managementKey,
    newProxies,
    1000,
    true,
    check,
    sandboxProcesses,
  );
  log(`proxy: the same, back to back…`);
  const backToBack = await newCodeSeries(
    setup,
    serviceUrl,
    managementKey,
    newProxies,
    0,
    true,
    check,
    sandboxProcesses,
  );
  return {
    sequential: { direct: directStats, proxy: proxyStats, transform: transformStats },
    sequential_slow: { direct: slowDirect, pass_through: slowPass, floor: slowFloor, proxy: slowProxy },
    sequential_transform_adds_p50_ms: Number((transformStats.p50 - proxyStats.p50).toFixed(2)),
    sandbox_warm,
    new_proxy_without_transform: control,
    new_code: spaced,
    new_code_back_to_back: backToBack,
  };
}
