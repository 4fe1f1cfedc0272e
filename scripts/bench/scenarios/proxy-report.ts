/** What the proxy scenario prints: its table, its latency targets and the figures that explain them. */
import { SLOW_ANSWER_MS } from "../destination.ts";
import { describeStats, type NewCodeSeries, type ProxyLatency } from "../proxy.ts";
import type { TargetLabel } from "../runs.ts";
import { settings } from "../settings.ts";
import type { Check, Summary } from "../summary.ts";
import { LEAD_HEADER, leadCells, ms2, pct, renderTable, serviceCpu, targetCell, verdict } from "../tables.ts";
import {
  NEW_CODE_TARGET_MS,
  SLOW_CONNECTIONS,
  SLOW_TARGET_RATIO,
  TRANSFORM_ADDS_TARGET_MS,
} from "./proxy.ts";

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

/** With SLOW_CONNECTIONS always busy, a request takes connections ÷ req/s: what a proxy added to direct's (ms). */
const addedMs = (rps: number, directRps: number) =>
  (SLOW_CONNECTIONS * 1000) / rps - (SLOW_CONNECTIONS * 1000) / directRps;
/** What a proxy may add to each request and still reach SLOW_TARGET_RATIO of direct's req/s (ms). */
const addedBudgetMs = (directRps: number) => addedMs(SLOW_TARGET_RATIO * directRps, directRps);

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
  // Not for the slow destination: its baseline does almost no work, so a CPU ratio there says nothing.
  for (const s of [proxy, transform])
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
  const slowPass = of("pass-through, slow destination");
  const slowFloor = of("floor, slow destination");
  if (slowDirect && slowPass && slowFloor)
    console.log(
      `proxy: through the slow destination, a bare Node forwarder reached ${pct(slowPass.ratio)} of direct and the ` +
        `proxy floor ${pct(slowFloor.ratio)}: each request may add ${addedBudgetMs(slowDirect.rps).toFixed(1)} ms ` +
        `(queueing on this machine included) for ${pct(SLOW_TARGET_RATIO)}; the floor added ` +
        `${addedMs(slowFloor.rps, slowDirect.rps).toFixed(1)} ms, the bare forwarder ${addedMs(slowPass.rps, slowDirect.rps).toFixed(1)} ms.`,
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
  const slow = latency.sequential_slow;
  const adds = (s: { p50: number }) => (s.p50 - slow.direct.p50).toFixed(2);
  console.log(
    `proxy: the slow destination, one request at a time (${slow.direct.n} each): direct ${describeStats(slow.direct)}; ` +
      `added at p50 by a bare forwarder ${adds(slow.pass_through)} ms, the proxy floor ${adds(slow.floor)} ms, ` +
      `the proxy ${adds(slow.proxy)} ms (without any queueing; at ${SLOW_CONNECTIONS} connections, ${pct(SLOW_TARGET_RATIO)} ` +
      `of direct allows about ${addedBudgetMs((SLOW_CONNECTIONS * 1000) / slow.direct.p50).toFixed(1)} ms)`,
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
