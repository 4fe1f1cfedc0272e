/** `npm run fuzz`: fast-check cases for every write route, against the local service (docs/fuzzing.md). */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { routeList } from "#shared/api/index.ts";
import { call } from "./api-call.ts";
import { startDestination } from "./bench/destination.ts";
import { caseArbitrary, WRITE_METHODS, type WriteRoute } from "./fuzz/cases.ts";
import { checkAnswer, prototypeSnapshot, takePollution } from "./fuzz/check.ts";
import { exampleFor } from "./fuzz/examples.ts";
import { reproducer, summary, Tally } from "./fuzz/report.ts";
import { prepare, send } from "./fuzz/request.ts";
import { buildTenant } from "./fuzz/world.ts";
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
const tally = new Tally();

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
  const { startDynamoDbLocal } = await import("#shared/local/dynamodb-local.ts");
  const { startLocalService } = await import("#functions/local.ts");
  // Throwaway data and its master key, in a directory removed at the end.
  const dataDir = mkdtempSync(join(tmpdir(), "svc-fuzz-"));
  const masterKeyFile = join(dataDir, "master.key");
  // The proxies' destination answers 200 to everything: every 4xx of /proxy is the service's.
  const destination = await startDestination();
  const dynamo = await startDynamoDbLocal();
  const rootKey = `key_root_fuzz_${seed}_0000000000`;
  const local = { port: 0, rootKey, dataDir, tableName: "svc-fuzz", testClock: true, masterKeyFile };
  const service = await startLocalService({ ...local, dynamodbEndpoint: dynamo.endpoint });
  const kmsDir = `${masterKeyFile}.customer-keys`; // the local default (shared/config.ts)
  const outboxDir = join(dataDir, "outbox");
  const run = { url: service.url, rootKey, destinationUrl: `${destination.url}/fuzz/`, outboxDir, kmsDir };
  const started = Date.now();
  try {
    // The canary: a tenant no case touches. Its tokens, read revealed, must answer after each batch as at start.
    const canary = await buildTenant(run, "canary");
    const readCanary = () =>
      call(service.url, "GET", "/tokens", canary.keys.private, undefined, 200).then(JSON.stringify);
    const canaryAtStart = await readCanary(); // a failure here stops the run: the canary must be readable
    const baseline = prototypeSnapshot();
    // Round-robin over the routes. A route's seed depends on its id, not its place: FUZZ_ROUTES replays its cases.
    const perRoute = routes.map((route) => {
      const hash = createHash("sha256").update(`${seed}:${route.operationId}`).digest();
      const plans = fc.sample(caseArbitrary(route), { seed: hash.readUInt32BE(0) % 2 ** 31, numRuns: runs });
      return plans.map((plan) => ({ route, plan }));
    });
    const all = [...Array(runs).keys()].flatMap((i) => perRoute.flatMap((cases) => cases[i] ?? []));
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
          const failure = { route: next.route.operationId, status: answer.status, plan: next.plan };
          tally.count(failure.route, answer.status);
          // A prototype changed by this request, or by one still in flight (FUZZ_CONCURRENCY=1 tells which).
          const added = takePollution(baseline).join(", ");
          const violations = checkAnswer(answer, request.context);
          if (added)
            violations.push({ kind: "prototype-pollution", detail: `${added}; ${inFlight} in flight` });
          for (const violation of violations)
            tally.fail({ ...failure, ...violation, shown: reproducer(request) });
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      // Every answer was followed by a look at the prototypes: only the canary is left to check.
      const now = await readCanary().catch(String);
      const shown = `batch ${index + 1} (FUZZ_SEED=${seed})`;
      const detail = `GET /tokens answered ${now.slice(0, 300)}`;
      if (now !== canaryAtStart) tally.fail({ route: "canary", kind: "canary", detail, status: 0, shown });
      log(`batch ${index + 1}/${batches}: ${tally.requests} requests, ${tally.failures} failures`);
    }
  } finally {
    await service.stop().catch(() => undefined);
    await dynamo.stop().catch(() => undefined);
    await destination.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(summary(tally, routes));
  const verdict = tally.failures === 0 ? "PASS" : `FAIL (${tally.failures})`;
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\n${tally.requests} fuzzed requests in ${seconds} s; ${verdict}; FUZZ_SEED=${seed}`);
  return tally.failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error("fuzz failed to run:", error);
    process.exit(2);
  },
);
