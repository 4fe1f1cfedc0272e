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

import { SLOW_ANSWER_MS } from "../destination.ts";
import { median } from "../load.ts";
import {
  DESTINATION_PATH,
  describeStats,
  type FixedRateLatency,
  type NewCodeSeries,
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
  type TargetLabel,
} from "../runs.ts";
import { log, settings } from "../settings.ts";
import { checkInterrupted } from "../shutdown.ts";
import { type Check, compared, runsOf, type Summary, summaryOf } from "../summary.ts";
import { LEAD_HEADER, leadCells, ms2, pct, renderTable, serviceCpu, targetCell, verdict } from "../tables.ts";
import type { RunningTarget } from "../targets.ts";

/** Share of the proxy floor's req/s that `proxy` must reach. */
export const PROXY_OF_FLOOR_TARGET = 0.8;
/** Share of `direct, slow destination`'s req/s that `proxy, slow destination` must reach, at SLOW_CONNECTIONS. */
export const SLOW_TARGET_RATIO = 0.9;
/** The issue's condition for the slow-destination pair, whatever BENCH_CONNECTIONS says. */
export const SLOW_CONNECTIONS = 16;
/** The issue's targets for proxy transforms: a warm one adds at most 5 ms at p50, new code runs within 150 ms. */
export const TRANSFORM_ADDS_TARGET_MS = 5;
export const NEW_CODE_TARGET_MS = 150;

export function proxyTargets(
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
    viaFloor("floor, slow destination", `/slow${floorProxyPath}`, setup.proxyBody, SLOW_CONNECTIONS),
    through("proxy, slow destination", setup.slowProxyKey, SLOW_CONNECTIONS),
  ];
}

export async function fixedRateLatency(
  targets: LoadTarget[],
  records: RunRecord[],
): Promise<FixedRateLatency> {
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

/** Proxy: each target, its CPU, and its share of its baseline. */
export function proxyTable(summaries: Summary[]): string {
  const header = [
    ...LEAD_HEADER,
    "CPU ms/req proxy (of which sandbox) + destination + DDB Local",
    "of",
    "share",
    "target",
    "result",
  ];
  const rows = summaries.map((s) => [
    ...leadCells(s),
    s.target.startsWith("direct")
      ? `– + ${ms2(s.target_cpu_ms_per_request)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`
      : `${serviceCpu(s)} + ${ms2(s.destination_cpu_ms_per_request)} + ${ms2(s.dynamodb_local_cpu_ms_per_request)}`,
    s.compared_with ?? "",
    pct(s.ratio),
    targetCell(s),
    verdict(s.pass),
  ]);
  return renderTable(header, rows, new Set([2, 3, 4, 5, 7]));
}

/** The proxy scenario's latency targets, from the fixed-rate runs and the unloaded measurements. */
export function proxyChecks(latency: ProxyLatency | undefined): Check[] {
  const checks: Check[] = [];
  const check = (what: string, value: number, target: number) =>
    checks.push({
      scenario: "proxy",
      what,
      value_ms: Number(value.toFixed(2)),
      target_ms: target,
      pass: value <= target,
    });
  if (latency?.fixed_rate)
    check(
      `warm transform adds at p50 under load (${latency.fixed_rate.rate_rps} req/s)`,
      latency.fixed_rate.transform_adds_p50_ms,
      TRANSFORM_ADDS_TARGET_MS,
    );
  if (latency) {
    check(
      "warm transform adds at p50, one request at a time",
      latency.sequential_transform_adds_p50_ms,
      TRANSFORM_ADDS_TARGET_MS,
    );
    check("first run of new transform code, max, 1 s apart", latency.new_code.first.max, NEW_CODE_TARGET_MS);
    check(
      "first run of new transform code, max, back to back",
      latency.new_code_back_to_back.first.max,
      NEW_CODE_TARGET_MS,
    );
  }
  return checks;
}

export function printProxyLatency(
  summaries: Summary[],
  latency: ProxyLatency | undefined,
  checks: Check[],
): void {
  const of = (target: TargetLabel) => summaries.find((s) => s.scenario === "proxy" && s.target === target);
  const proxy = of("proxy");
  const transform = of("proxy+transform");
  const result = (what: string) => {
    const c = checks.find((x) => x.what === what);
    return c ? ` (target ≤ ${c.target_ms} ms): ${verdict(c.pass)}` : "";
  };
  for (const s of [proxy, transform, of("proxy, slow destination")])
    if (s?.cpu_ratio !== undefined)
      console.log(
        `proxy: CPU per request of ${s.target} (service with its sandbox processes, destination, DynamoDB Local ` +
          `and autocannon) is ${(1 / s.cpu_ratio).toFixed(2)} × ${s.compared_with}'s, i.e. a CPU-bound ratio of ` +
          `${pct(s.cpu_ratio)} (cross-check of the measured ${pct(s.ratio)}).`,
      );
  const passThrough = of("pass-through");
  const floor = of("floor");
  if (passThrough && floor)
    console.log(
      `proxy: for scale, against the loopback destination answering at once (direct): a bare Node proxy that only ` +
        `forwards (pass-through) did ${pct(passThrough.ratio)} of it; the proxy floor (GetItem + open + audit ` +
        `PutItem, then forward) ${pct(floor.ratio)}.`,
    );
  const slowDirect = of("direct, slow destination");
  if (slowDirect)
    console.log(
      `proxy: the slow destination answers ${SLOW_ANSWER_MS} ms after the body, so ${SLOW_CONNECTIONS} connections ` +
        `allow at most ${(SLOW_CONNECTIONS * 1000) / SLOW_ANSWER_MS} req/s; called directly it did ${slowDirect.rps.toFixed(0)}.`,
    );
  if (proxy && transform)
    console.log(
      `proxy: at saturation p50(proxy+transform) − p50(proxy) = ${transform.p50} − ${proxy.p50} = ` +
        `${transform.p50 - proxy.p50} ms. Not a latency figure: with ${settings.connections} connections always busy, ` +
        `p50 ≈ connections ÷ req/s, so this follows the throughput lost to the transform's CPU.`,
    );
  const fixed = latency?.fixed_rate;
  if (fixed) {
    const what = `warm transform adds at p50 under load (${fixed.rate_rps} req/s)`;
    console.log(
      `proxy: ${what}, half of what proxy+transform sustains: p50 proxy ${fixed.proxy_p50_ms.join(", ")} ms, ` +
        `proxy+transform ${fixed.transform_p50_ms.join(", ")} ms; median difference ${fixed.transform_adds_p50_ms} ms${result(what)}`,
    );
  }
  if (!latency) return;
  const { sequential: seq } = latency;
  console.log(
    `proxy: one request at a time (${seq.proxy.n} each): direct ${describeStats(seq.direct)}; ` +
      `proxy ${describeStats(seq.proxy)}; proxy+transform ${describeStats(seq.transform)}`,
  );
  const seqWhat = "warm transform adds at p50, one request at a time";
  console.log(`proxy: ${seqWhat}: ${latency.sequential_transform_adds_p50_ms} ms${result(seqWhat)}`);
  console.log(
    `proxy: the transform alone, warm, through a ProcessSandbox in the bench process: ${describeStats(latency.sandbox_warm)}`,
  );
  const series = (name: string, s: NewCodeSeries, what?: string) =>
    console.log(
      `proxy: ${name} (${s.first.n} proxies${s.pause_ms ? `, ${s.pause_ms / 1000} s apart` : ", back to back"}): ` +
        `first request ${describeStats(s.first)}${what ? result(what) : ""}; second request ${describeStats(s.second)}` +
        (s.with_transform
          ? `; the service's sandbox processes before each first request (pool cap 16): ${s.sandbox_processes_before.join(" ")}`
          : ""),
    );
  series("new proxy without a transform (control)", latency.new_proxy_without_transform);
  series(
    "new proxy with new transform code",
    latency.new_code,
    "first run of new transform code, max, 1 s apart",
  );
  series(
    "new proxy with new transform code",
    latency.new_code_back_to_back,
    "first run of new transform code, max, back to back",
  );
}
