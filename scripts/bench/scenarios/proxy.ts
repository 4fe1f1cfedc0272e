/**
 * proxy: POST /proxy (one card token detokenized into the body) against the proxy floor (floor-service.ts: the
 * token read, opened and logged, then the forward, in a bare node:http server), and the same through a proxy
 * whose request transform is trivial, all to a destination answering at once (destination.ts). Then:
 *
 * - what the warm transform adds at p50 at a fixed rate both sustain easily (at saturation p50 ≈ connections ÷
 *   req/s, so a difference of p50s there measures throughput, not what a transform adds to a request);
 * - the first request through each of BENCH_NEW_PROXIES new proxies with transform code never run before, 1 s
 *   apart (the blank spare sandbox process is ready again).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { call, timedCall } from "../api.ts";
import { median } from "../load.ts";
import {
  failures,
  type LoadTarget,
  postLoad,
  RequestFailures,
  type RunRecord,
  runScenario,
} from "../runs.ts";
import { CARD, log, settings } from "../settings.ts";
import { checkInterrupted } from "../shutdown.ts";
import { verdict } from "../summary.ts";
import type { RunningTarget } from "../targets.ts";

/** The destination's path; proxies point at `<destination>/charges`. */
export const DESTINATION_PATH = "/charges";
/** A warm transform adds at most this at p50; the first run of new code takes at most NEW_CODE_TARGET_MS. */
const TRANSFORM_ADDS_TARGET_MS = 5;
const NEW_CODE_TARGET_MS = 150;
export const TRIVIAL_TRANSFORM =
  "module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });";

/** Headers of a request through a proxy (also the cost script's). */
export const proxyHeaders = (proxyKey: string, useKey: string) => ({
  "svc-proxy-key": proxyKey,
  "svc-api-key": useKey,
  "content-type": "application/json",
});

export interface ProxyFigures {
  fixed_rate_rps: number;
  proxy_p50_ms: number[];
  transform_p50_ms: number[];
  transform_adds_p50_ms: number;
  new_code_first_ms: number[];
  new_code_max_ms: number;
}

interface Parties {
  service: RunningTarget;
  floor: RunningTarget;
  destination: RunningTarget;
  managementKey: string;
  createKey: string;
  /** SVC-API-KEY of the callers: a private application with token:use. */
  useKey: string;
}

export async function runProxyScenario(p: Parties, records: RunRecord[]): Promise<ProxyFigures> {
  const json = { "content-type": "application/json" };
  const newProxy = (name: string, code?: string) =>
    call<{ key: string }>(
      p.service.url,
      "POST",
      "/proxies",
      p.managementKey,
      {
        name,
        destination_url: `${p.destination.url}${DESTINATION_PATH}`,
        ...(code ? { request_transform: { code } } : {}),
      },
      201,
    ).then((proxy) => proxy.key);
  const card = { type: "card", data: CARD };
  const token = await call<{ id: string }>(p.service.url, "POST", "/tokens", p.createKey, card, 201);
  const floorToken = await call<{ id: string }>(p.floor.url, "POST", "/tokens", undefined, card, 201);
  const body = JSON.stringify({ card: `{{ ${token.id} }}` });
  const headers = (proxyKey: string) => proxyHeaders(proxyKey, p.useKey);
  const through = async (label: string, code?: string): Promise<LoadTarget> => {
    const key = await newProxy(`bench ${label}`, code);
    // One request first, so that a broken path fails here rather than after the load runs.
    await call(p.service.url, "POST", "/proxy", undefined, body, 200, headers(key));
    const { pid, url } = p.service;
    return {
      label,
      pid,
      destinationPid: p.destination.pid,
      traced: p.service,
      load: postLoad(url, "/proxy", headers(key), body),
    };
  };
  const floorPath = `/proxy/${encodeURIComponent(floorToken.id)}`;
  await call(p.floor.url, "POST", floorPath, undefined, body, 200, json);
  const floor: LoadTarget = {
    label: "floor",
    pid: p.floor.pid,
    destinationPid: p.destination.pid,
    traced: p.floor,
    load: postLoad(p.floor.url, floorPath, json, body),
  };
  const proxy = await through("proxy");
  const transform = await through("proxy+transform", TRIVIAL_TRANSFORM);
  await runScenario("proxy", [floor, proxy, transform], records);

  const saturated = records.filter((r) => r.scenario === "proxy" && r.target === transform.label);
  const rate = Math.max(10, Math.floor(median(saturated.map((r) => r.rps)) / 2 / 10) * 10);
  const p50s: [number[], number[]] = [[], []];
  for (let round = 1; round <= settings.rounds; round++)
    for (const [i, target] of [proxy, transform].entries()) {
      checkInterrupted();
      const figures = await target.load(settings.durationSeconds, rate);
      log(
        `proxy: round ${round} ${target.label} at ${rate} req/s: p50 ${figures.p50} ms, p99 ${figures.p99} ms`,
      );
      if (failures(figures) > 0)
        throw new RequestFailures(`proxy fixed-rate round ${round} of ${target.label}`);
      p50s[i]?.push(figures.p50);
    }

  log(
    `proxy: the first request through ${settings.newProxies} new proxies with new transform code, 1 s apart…`,
  );
  const series = randomUUID();
  const first: number[] = [];
  for (let i = 0; i < settings.newProxies; i++) {
    checkInterrupted();
    const key = await newProxy(`bench new ${i}`, `// bench: new code ${series} ${i}\n${TRIVIAL_TRANSFORM}`);
    await sleep(1000); // the spare sandbox process that saving the code used is ready again
    first.push(
      Number(
        (await timedCall(p.service.url, "POST", "/proxy", undefined, body, 200, headers(key))).toFixed(1),
      ),
    );
  }
  return {
    fixed_rate_rps: rate,
    proxy_p50_ms: p50s[0],
    transform_p50_ms: p50s[1],
    transform_adds_p50_ms: Number((median(p50s[1]) - median(p50s[0])).toFixed(2)),
    new_code_first_ms: first,
    new_code_max_ms: Math.max(...first),
  };
}

export function describeProxy(f: ProxyFigures): string {
  return [
    `proxy: a warm transform adds ${f.transform_adds_p50_ms} ms at p50 at ${f.fixed_rate_rps} req/s (target ≤ ${TRANSFORM_ADDS_TARGET_MS} ms) ${verdict(f.transform_adds_p50_ms <= TRANSFORM_ADDS_TARGET_MS)}`,
    `proxy: first request of new transform code: max ${f.new_code_max_ms} ms, median ${median(f.new_code_first_ms).toFixed(1)} ms (target ≤ ${NEW_CODE_TARGET_MS} ms) ${verdict(f.new_code_max_ms <= NEW_CODE_TARGET_MS)}`,
  ].join("\n");
}
