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
import { call } from "../../api-call.ts";
import { median } from "../load.ts";
import { DESTINATION_PATH, type Parties } from "../parties.ts";
import { type LoadTarget, type Measured, postLoad, type RunRecord, runScenario } from "../runs.ts";
import { newApplication, seed } from "../service-setup.ts";
import { log, settings } from "../settings.ts";
import { checkInterrupted } from "../shutdown.ts";
import { summaryFor, verdict } from "../summary.ts";
import type { RunningTarget } from "../targets.ts";

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

export async function runProxyScenario(
  { service, floor, destination }: Parties,
  keys: { management: string; create: string },
  records: RunRecord[],
): Promise<Measured> {
  if (!floor || !destination) throw new Error("proxy: the floor or the destination is not running");
  // The callers: a private application with token:use.
  const useKey = await newApplication(service.url, keys.management, "private", ["token:use"]);
  const [[tokenId], [floorTokenId]] = await Promise.all([
    seed(service.url, keys.create, 1),
    seed(floor.url, undefined, 1),
  ]);
  const body = JSON.stringify({ card: `{{ ${tokenId} }}` });
  const target = (label: string, on: RunningTarget, path: string, headers: Record<string, string>) => ({
    label,
    pid: on.pid,
    destinationPid: destination.pid,
    traced: on,
    load: postLoad(on.url, path, headers, body),
  });
  const newProxy = async (name: string, code?: string) => {
    const destination_url = `${destination.url}${DESTINATION_PATH}`;
    const proxy = { name, destination_url, ...(code ? { request_transform: { code } } : {}) };
    const { key } = await call<{ key: string }>(service.url, "POST", "/proxies", keys.management, proxy, 201);
    return proxyHeaders(key, useKey);
  };
  const through = (headers: Record<string, string>) =>
    call(service.url, "POST", "/proxy", undefined, body, 200, headers);
  const proxied = async (label: string, code?: string) => {
    const headers = await newProxy(`bench ${label}`, code);
    await through(headers); // one request first: a broken path fails here, not after the runs
    return target(label, service, "/proxy", headers);
  };
  const floorPath = `/proxy/${encodeURIComponent(floorTokenId as string)}`;
  const floorTarget = target("floor", floor, floorPath, { "content-type": "application/json" });
  await call(floor.url, "POST", floorPath, undefined, body, 200);
  const proxy = await proxied("proxy");
  const transform = await proxied("proxy+transform", TRIVIAL_TRANSFORM);
  await runScenario("proxy", [floorTarget, proxy, transform], records);

  // Both proxies again at half the transform's saturated rate, no warm-up needed.
  const saturated = summaryFor(records, "proxy", transform.label).rps;
  const rate = Math.max(10, Math.floor(saturated / 2 / 10) * 10);
  const paced = (t: LoadTarget): LoadTarget => ({
    ...t,
    label: `${t.label} at ${rate}/s`,
    load: (s) => t.load(s, rate),
  });
  await runScenario("proxy", [paced(proxy), paced(transform)], records, 0);
  const p50 = (t: LoadTarget) => summaryFor(records, "proxy", paced(t).label).p50;
  const transformAdds = Number((p50(transform) - p50(proxy)).toFixed(2));

  log(
    `proxy: the first request through ${settings.newProxies} new proxies with new transform code, 1 s apart…`,
  );
  const series = randomUUID();
  const first: number[] = [];
  for (let i = 0; i < settings.newProxies; i++) {
    checkInterrupted();
    const headers = await newProxy(
      `bench new ${i}`,
      `// bench: new code ${series} ${i}\n${TRIVIAL_TRANSFORM}`,
    );
    await sleep(1000); // the spare sandbox process that saving the code used is ready again
    const started = performance.now();
    await through(headers);
    first.push(Number((performance.now() - started).toFixed(1)));
  }
  const newCodeMax = Math.max(...first);
  return {
    figures: { fixed_rate_rps: rate, transform_adds_p50_ms: transformAdds, new_code_first_ms: first },
    report: [
      `proxy: a warm transform adds ${transformAdds} ms at p50 at ${rate} req/s (target ≤ ${TRANSFORM_ADDS_TARGET_MS} ms) ${verdict(transformAdds <= TRANSFORM_ADDS_TARGET_MS)}`,
      `proxy: first request of new transform code: max ${newCodeMax} ms, median ${median(first).toFixed(1)} ms (target ≤ ${NEW_CODE_TARGET_MS} ms) ${verdict(newCodeMax <= NEW_CODE_TARGET_MS)}`,
    ].join("\n"),
  };
}
