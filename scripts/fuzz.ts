/** `npm run fuzz`: fast-check cases for every write route, against the local service (docs/fuzzing.md). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { routeList } from "#shared/api/index.ts";
import { call } from "./api-call.ts";
import { startDestination } from "./bench/destination.ts";
import { caseArbitrary, type FuzzCase, WRITE_METHODS, type WriteRoute } from "./fuzz/cases.ts";
import { checkAnswer, prototypeSnapshot, takePollution, type Violation } from "./fuzz/check.ts";
import { exampleFor } from "./fuzz/examples.ts";
import { buildTenant, MASTER_KEY, type PreparedRequest, prepare, send } from "./fuzz/world.ts";
import { intEnv } from "./int-env.ts";

const settings = {
  seed: intEnv("FUZZ_SEED", Math.floor(Math.random() * 2 ** 31), 0, 2 ** 31 - 1),
  runs: intEnv("FUZZ_RUNS", 256, 1, 1_000_000),
  batch: intEnv("FUZZ_BATCH", 500, 10, 1_000_000),
  concurrency: intEnv("FUZZ_CONCURRENCY", 6, 1, 256),
  timeoutMs: intEnv("FUZZ_TIMEOUT_MS", 60_000, 1_000, 600_000),
  only: (process.env.FUZZ_ROUTES ?? "").split(",").flatMap((s) => s.trim() || []),
};

// Before the service reads its configuration: the fixtures' proxy destination is on loopback; quiet logs.
Object.assign(process.env, {
  SVC_PROXY_ALLOW_PRIVATE: "1",
  SVC_SYNC_REACT_TIMEOUT_MS: process.env.SVC_SYNC_REACT_TIMEOUT_MS ?? "5000",
  SVC_CALLBACK_RETRY_BASE_SECONDS: "900",
  ...(process.env.FUZZ_LOGS === "1" ? {} : { LOG_LEVEL: "SILENT", POWERTOOLS_LOG_LEVEL: "SILENT" }),
});

const log = (line: string) => console.log(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** A failed case: its route, reproducer and plan (none for a canary failure). */
type Failure = Violation & { route: string; status: number; shown: string; plan?: FuzzCase };
/** Answers by route and status ("createToken 400"), and failures. */
const tally = { requests: 0, failures: 0, answers: new Map<string, number>() };
/** One class per route, kind and detail (numbers and ids stripped): its count and shortest reproducer. */
const classes = new Map<string, { count: number; first: Failure }>();

function fail(failure: Failure): void {
  tally.failures += 1;
  const id = `${failure.route}|${failure.kind}|${failure.detail.replace(/[0-9a-f]{8,}|\d+/gi, "#").slice(0, 160)}`;
  const known = classes.get(id) ?? { count: 0, first: failure };
  if (failure.shown.length < known.first.shown.length) known.first = failure; // the closest to minimal
  classes.set(id, { ...known, count: known.count + 1 });
}

/** Method, path, headers (the key by its role) and body, each cut to something a person can read. */
function reproducer({ method, path, body, headers, keyRole }: PreparedRequest): string {
  const shownHeaders = JSON.stringify({ ...headers, "svc-api-key": keyRole }).slice(0, 300);
  const shownBody = JSON.stringify(String(body?.subarray(0, 300) ?? "")).slice(1, -1);
  return `${method} ${path.slice(0, 160)} ${shownHeaders}\n      ${shownBody} (${body?.length ?? 0} bytes)`;
}

function printSummary(routes: WriteRoute[]): void {
  console.log(`\nRequests: ${tally.requests} over ${routes.length} routes; per route (status:count):`);
  for (const r of routes) {
    const counts = [...tally.answers].filter(([id]) => id.startsWith(`${r.operationId} `)).sort(); // by status
    console.log(`  ${r.method} ${r.path}  ${counts.map(([id, n]) => `${id.split(" ")[1]}:${n}`).join(" ")}`);
  }
  const sorted = [...classes.values()].sort((a, b) => a.first.route.localeCompare(b.first.route));
  console.log(`\nFailures: ${tally.failures} in ${sorted.length} classes`);
  for (const { first, count } of sorted) {
    console.log(`  [${first.kind}] ${first.route} ${first.status}, ${count}×: ${first.detail}`);
    console.log(`    e.g. ${first.shown}`);
    if (first.plan) console.log(`      plan: ${JSON.stringify(first.plan.body).slice(0, 300)}`);
  }
}

async function main(): Promise<number> {
  const { seed, runs, only } = settings;
  const routes = routeList.filter(
    (r) =>
      (WRITE_METHODS as readonly string[]).includes(r.method) &&
      (only.length === 0 || only.some((o) => o === r.operationId || o === r.path)),
  ) as WriteRoute[];
  if (routes.length === 0) throw new Error(`FUZZ_ROUTES matched no write route: ${only.join(",")}`);
  log(`seed ${seed} (FUZZ_SEED replays it), ${runs} cases per route`);
  const bare = routes.flatMap((r) => (exampleFor(r) ? [] : r.operationId)).join(", ");
  log(`${routes.length} write routes; without a valid example: ${bare || "none"}`);
  const { startLocalService } = await import("#functions/local.ts");
  // Throwaway data and its master key (MASTER_KEY), in a directory removed at the end; DynamoDB Local in memory.
  const dataDir = mkdtempSync(join(tmpdir(), "svc-fuzz-"));
  const options = { inMemory: true, testClock: true, masterKeyFile: join(dataDir, MASTER_KEY) };
  // The proxies' destination answers 200 to everything: every 4xx of /proxy is the service's.
  const destination = await startDestination();
  const rootKey = `key_root_fuzz_${seed}_0000000000`;
  const service = await startLocalService({ port: 0, rootKey, dataDir, ...options });
  const run = { url: service.url, rootKey, dataDir, destinationUrl: `${destination.url}/fuzz/` };
  const started = Date.now();
  try {
    // The canary: a tenant no case touches. Its tokens, read revealed, must answer after each batch as at start.
    const canary = await buildTenant(run, "canary");
    const readCanary = () =>
      call(service.url, "GET", "/tokens", canary.keys.private, undefined, 200).then(JSON.stringify);
    const canaryAtStart = await readCanary(); // a failure here stops the run: the canary must be readable
    const baseline = prototypeSnapshot();
    // Round-robin over the routes. A route's seed depends on its id, not its place: FUZZ_ROUTES replays its cases.
    const perRoute = routes.map((route) =>
      fc.sample(caseArbitrary(route), { seed: fc.hash(`${seed}:${route.operationId}`), numRuns: runs }),
    );
    const all = [...Array(runs).keys()].flatMap((i) =>
      perRoute.flatMap((plans, r) => (plans[i] ? { route: routes[r] as WriteRoute, plan: plans[i] } : [])),
    );
    // Deletions go last in a batch, so that the fixtures serve its other cases; the tenant's own the very
    // last, as it turns every later request of the batch into a 401 (a stable sort keeps the rest in order).
    const rank = (r: WriteRoute) => (r.method !== "DELETE" ? 0 : r.path === "/tenants/self" ? 2 : 1);
    const batches = Math.ceil(all.length / settings.batch);
    log(`service at ${service.url}; ${all.length} cases in ${batches} batches`);
    for (let index = 0; index < batches; index++) {
      const batch = all.slice(index * settings.batch, (index + 1) * settings.batch);
      batch.sort((a, b) => rank(a.route) - rank(b.route));
      const [A, B] = [await buildTenant(run, "A"), await buildTenant(run, "B")];
      const fixtures = { ...run, A, B, canary: canary.secretNumbers };
      let inFlight = 0;
      const worker = async () => {
        for (let next = batch.shift(); next; next = batch.shift()) {
          const request = prepare(next.plan, next.route, fixtures);
          inFlight += 1;
          const answer = await send(service.url, request, settings.timeoutMs);
          inFlight -= 1;
          const [route, id] = [next.route.operationId, `${next.route.operationId} ${answer.status}`];
          tally.requests += 1;
          tally.answers.set(id, (tally.answers.get(id) ?? 0) + 1);
          // A prototype changed by this request, or by one still in flight (FUZZ_CONCURRENCY=1 tells which).
          const added = takePollution(baseline).join(", ");
          const violations = checkAnswer(answer, request.context);
          if (added)
            violations.push({ kind: "prototype-pollution", detail: `${added}; ${inFlight} in flight` });
          for (const violation of violations)
            fail({ route, status: answer.status, plan: next.plan, ...violation, shown: reproducer(request) });
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      // Every answer was followed by a look at the prototypes: only the canary is left to check.
      const [now, shown] = [await readCanary().catch(String), `batch ${index + 1} (FUZZ_SEED=${seed})`];
      const detail = `GET /tokens answered ${now.slice(0, 300)}`;
      if (now !== canaryAtStart) fail({ route: "canary", kind: "canary", detail, status: 0, shown });
      log(`batch ${index + 1}/${batches}: ${tally.requests} requests, ${tally.failures} failures`);
    }
  } finally {
    await service.stop().catch(() => undefined);
    await destination.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  printSummary(routes);
  const verdict = tally.failures === 0 ? "PASS" : `FAIL (${tally.failures})`;
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\n${tally.requests} fuzzed requests in ${seconds} s; ${verdict}; FUZZ_SEED=${seed}`);
  return tally.failures === 0 ? 0 : 1;
}

const code = await main().catch((error: unknown) => {
  console.error("fuzz failed to run:", error);
  return 2;
});
process.exit(code);
