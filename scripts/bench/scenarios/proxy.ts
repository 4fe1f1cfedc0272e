/**
 * proxy: the service's /proxy under load against two baselines that do what any proxy must:
 *
 * - the proxy floor (scripts/bench/floor-service.ts): the mandatory vault work (read the token, open it, write the
 *   audit entry) and the forward, in a bare node:http server. `proxy` must reach PROXY_OF_FLOOR_TARGET of its req/s.
 * - a destination that answers after SLOW_ANSWER_MS, called directly and through a proxy, at SLOW_CONNECTIONS
 *   connections: with a destination that takes time, as real ones do, the proxy must not be what limits
 *   throughput (SLOW_TARGET_RATIO).
 *
 * `direct` (the loopback destination answering at once) and `pass-through` (a bare Node forwarder) stay as
 * information: they show what a proxy on this machine can do at best, not a target. Then the transform's
 * latency at a fixed rate and without load (scripts/bench/proxy.ts).
 */

import { descendantPids } from "../cpu.ts";
import { median } from "../load.ts";
import {
  DESTINATION_PATH,
  type FixedRateLatency,
  measureProxyLatency,
  type ProxyLatency,
  type ProxySetup,
  proxyHeaders,
  SLOW_DESTINATION_PATH,
} from "../proxy.ts";
import {
  failures,
  type LoadTarget,
  postLoad,
  RequestFailures,
  type RunRecord,
  runScenario,
  type TargetLabel,
} from "../runs.ts";
import { log, settings } from "../settings.ts";
import { checkInterrupted, wasInterrupted } from "../shutdown.ts";
import { compared, runsOf, type Summary, summaryOf } from "../summary.ts";
import type { RunningTarget } from "../targets.ts";

/** Share of the proxy floor's req/s that `proxy` must reach. */
export const PROXY_OF_FLOOR_TARGET = 0.8;
/** Share of `direct, slow destination`'s req/s that `proxy, slow destination` must reach, at SLOW_CONNECTIONS. */
export const SLOW_TARGET_RATIO = 0.9;
/** The condition for the slow-destination pair, whatever BENCH_CONNECTIONS says. */
export const SLOW_CONNECTIONS = 16;
/** The targets for proxy transforms: a warm one adds at most 5 ms at p50, new code runs within 150 ms. */
export const TRANSFORM_ADDS_TARGET_MS = 5;
export const NEW_CODE_TARGET_MS = 150;

function proxyTargets(
  service: RunningTarget,
  floor: RunningTarget,
  destination: RunningTarget,
  setup: ProxySetup,
): LoadTarget[] {
  const json = { "content-type": "application/json" };
  const floorProxyPath = `/proxy/${encodeURIComponent(setup.floorCardTokenId)}`;
  const direct = (label: TargetLabel, path: string, connections?: number): LoadTarget => ({
    label,
    pid: destination.pid,
    load: postLoad(destination.url, path, json, setup.directBody, connections),
  });
  const viaFloor = (label: TargetLabel, path: string, body: string, connections?: number): LoadTarget => ({
    label,
    pid: floor.pid,
    destinationPid: destination.pid,
    traced: floor,
    load: postLoad(floor.url, path, json, body, connections),
  });
  const through = (label: TargetLabel, proxyKey: string, connections?: number): LoadTarget => ({
    label,
    pid: service.pid,
    destinationPid: destination.pid,
    traced: service,
    load: postLoad(service.url, "/proxy", proxyHeaders(proxyKey, setup.useKey), setup.proxyBody, connections),
  });
  return [
    direct("direct", DESTINATION_PATH),
    viaFloor("pass-through", "/pass", setup.directBody),
    viaFloor("floor", floorProxyPath, setup.proxyBody),
    through("proxy", setup.proxyKey),
    through("proxy+transform", setup.transformProxyKey),
    direct("direct, slow destination", SLOW_DESTINATION_PATH, SLOW_CONNECTIONS),
    viaFloor("pass-through, slow destination", "/slow/pass", setup.directBody, SLOW_CONNECTIONS),
    viaFloor("floor, slow destination", `/slow${floorProxyPath}`, setup.proxyBody, SLOW_CONNECTIONS),
    through("proxy, slow destination", setup.slowProxyKey, SLOW_CONNECTIONS),
  ];
}

/**
 * The scenario: its targets under load, then proxy and proxy+transform at a fixed rate, then the unloaded
 * measurements. A failed request anywhere is a RequestFailures (the bench stops and says so).
 */
export async function runProxyScenario(options: {
  service: RunningTarget;
  floor: RunningTarget;
  destination: RunningTarget;
  setup: ProxySetup;
  managementKey: string;
  records: RunRecord[];
}): Promise<ProxyLatency> {
  const { service, setup, records } = options;
  const targets = proxyTargets(service, options.floor, options.destination, setup);
  await runScenario("proxy", targets, records);
  checkInterrupted();
  const fixedRate = await fixedRateLatency(targets, records);
  try {
    const latency = await measureProxyLatency(setup, service.url, options.managementKey, {
      samples: settings.latencySamples,
      newProxies: settings.newProxies,
      log,
      check: checkInterrupted,
      sandboxProcesses: () => descendantPids(service.pid).length,
    });
    return { ...latency, fixed_rate: fixedRate };
  } catch (error) {
    if (wasInterrupted()) throw error;
    throw new RequestFailures(
      `proxy's unloaded measurements: ${error instanceof Error ? error.message : error}`,
    );
  }
}

async function fixedRateLatency(targets: LoadTarget[], records: RunRecord[]): Promise<FixedRateLatency> {
  const saturated = records.filter((r) => r.scenario === "proxy" && r.target === "proxy+transform");
  const rate = Math.max(10, Math.floor(median(saturated.map((r) => r.rps)) / 2 / 10) * 10);
  const result: FixedRateLatency = {
    rate_rps: rate,
    proxy_p50_ms: [],
    transform_p50_ms: [],
    transform_adds_p50_ms: 0,
  };
  const proxy = targets.find((t) => t.label === "proxy");
  const transform = targets.find((t) => t.label === "proxy+transform");
  if (!proxy || !transform) return result;
  for (let round = 1; round <= settings.rounds; round++)
    for (const [target, p50s] of [
      [proxy, result.proxy_p50_ms],
      [transform, result.transform_p50_ms],
    ] as const) {
      checkInterrupted();
      const figures = await target.load(settings.durationSeconds, rate);
      log(
        `proxy: round ${round}/${settings.rounds} ${target.label} at ${rate} req/s: ${figures.rps.toFixed(0)} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms`,
      );
      if (failures(figures) > 0)
        throw new RequestFailures(`proxy fixed-rate round ${round} of ${target.label}`);
      p50s.push(figures.p50);
    }
  result.transform_adds_p50_ms = Number(
    (median(result.transform_p50_ms) - median(result.proxy_p50_ms)).toFixed(2),
  );
  return result;
}

/** Each target against its baseline: the floor against direct, `proxy` against the floor (target), and so on. */
const BASELINE: Partial<Record<TargetLabel, { base: TargetLabel; target?: number }>> = {
  "pass-through": { base: "direct" },
  floor: { base: "direct" },
  proxy: { base: "floor", target: PROXY_OF_FLOOR_TARGET },
  "proxy+transform": { base: "floor" },
  "pass-through, slow destination": { base: "direct, slow destination" },
  "floor, slow destination": { base: "direct, slow destination" },
  "proxy, slow destination": { base: "direct, slow destination", target: SLOW_TARGET_RATIO },
};

export function summarizeProxy(records: RunRecord[]): Summary[] {
  const measured = new Map<TargetLabel, Summary>();
  for (const label of [
    "direct",
    "pass-through",
    "floor",
    "proxy",
    "proxy+transform",
    "direct, slow destination",
    "pass-through, slow destination",
    "floor, slow destination",
    "proxy, slow destination",
  ] as const) {
    const runs = runsOf(records, "proxy", label);
    if (runs.length > 0) measured.set(label, summaryOf("proxy", label, runs));
  }
  return [...measured.values()].map((summary) => {
    const baseline = BASELINE[summary.target];
    const base = baseline && measured.get(baseline.base);
    return base && baseline ? compared(summary, base, baseline.target) : summary;
  });
}
